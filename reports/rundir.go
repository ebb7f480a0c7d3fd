package reports

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Names of the files WriteRunDir writes.
const (
	JUnitName = "junit.xml"
	JSONName  = "results.json"
	HTMLName  = "report.html"
)

// WriteRunDir writes junit.xml, results.json and report.html for run into
// dir, creating dir if needed. Each file is rendered in memory and renamed
// into place, so a reader (a CI step collecting artefacts, a browser
// reloading the page) never sees half a file, and a failed render leaves the
// previous file alone.
func WriteRunDir(dir string, run Run) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("failed to create the run directory: %w", err)
	}
	renderers := []struct {
		name   string
		render func(io.Writer, Run) error
	}{
		{JUnitName, WriteJUnit},
		{JSONName, WriteJSON},
		{HTMLName, WriteHTML},
	}
	for _, r := range renderers {
		var content bytes.Buffer
		if err := r.render(&content, run); err != nil {
			return err
		}
		if err := replaceFile(filepath.Join(dir, r.name), content.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// replaceFile writes content to a temporary file next to path and renames it
// over path.
func replaceFile(path string, content []byte) error {
	temporary, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("failed to create %s: %w", path, err)
	}
	_, writeErr := temporary.Write(content)
	closeErr := temporary.Close()
	if writeErr == nil {
		writeErr = closeErr
	}
	if writeErr == nil {
		writeErr = os.Chmod(temporary.Name(), 0o644)
	}
	if writeErr == nil {
		writeErr = os.Rename(temporary.Name(), path)
	}
	if writeErr != nil {
		_ = os.Remove(temporary.Name())
		return fmt.Errorf("failed to write %s: %w", path, writeErr)
	}
	return nil
}
