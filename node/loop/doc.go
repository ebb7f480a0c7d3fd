// Package loop attaches regular files as block devices through losetup, and
// fences a block device read-only.
//
// Only the kernel knows which loop devices exist, so nothing here keeps a
// record: List asks losetup, which reads sysfs, every time.
package loop
