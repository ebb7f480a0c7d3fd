package backend

import "io"

// ErrnoDevice is an open block device whose errors pass through Classify on
// their way out, so that the kernel's errno reaches callers as the refusal
// kind it means (the node agent's zvols and DRBD devices). A read's io.EOF
// passes as it is.
type ErrnoDevice struct {
	Device
	Path string
	// Classify turns an errno of the device at path into a refusal, or
	// returns err when it means nothing particular.
	Classify func(err error, path string) error
}

func (d *ErrnoDevice) ReadAt(b []byte, offset int64) (int, error) {
	n, err := d.Device.ReadAt(b, offset)
	if err != nil && err != io.EOF {
		err = d.Classify(err, d.Path)
	}
	return n, err
}

func (d *ErrnoDevice) WriteAt(b []byte, offset int64) (int, error) {
	n, err := d.Device.WriteAt(b, offset)
	if err != nil {
		err = d.Classify(err, d.Path)
	}
	return n, err
}

func (d *ErrnoDevice) Sync() error {
	if err := d.Device.Sync(); err != nil {
		return d.Classify(err, d.Path)
	}
	return nil
}

func (d *ErrnoDevice) Close() error {
	if err := d.Device.Close(); err != nil {
		return d.Classify(err, d.Path)
	}
	return nil
}
