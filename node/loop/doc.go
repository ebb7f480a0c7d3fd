// Package loop attaches regular files as block devices through losetup,
// lists the attached ones from sysfs and the devices themselves, detaches
// one attachment and never a later one of its name (Clear), and fences a
// block device read-only.
//
// Only the kernel knows which loop devices exist, so nothing here keeps a
// record: List asks the kernel every time.
package loop
