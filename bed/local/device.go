package local

import "os"

// blockDevice is a published block device as the application opens it: the
// file the CSI node plugin bind-mounted the volume's loop device on.
type blockDevice struct{ f *os.File }

func (d blockDevice) ReadAt(p []byte, off int64) (int, error)  { return d.f.ReadAt(p, off) }
func (d blockDevice) WriteAt(p []byte, off int64) (int, error) { return d.f.WriteAt(p, off) }
func (d blockDevice) Sync() error                              { return d.f.Sync() }
func (d blockDevice) Close() error                             { return d.f.Close() }
