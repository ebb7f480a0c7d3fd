package workload

import "fmt"

// DatabaseLayout shapes a database volume: one control block, a redo-log ring,
// then the data pages.
type DatabaseLayout struct {
	LogBlocks  int // the redo-log ring; a checkpoint is taken when half is in use
	PageBlocks int // the data pages
}

// UploadsLayout shapes an uploads volume: the directory, then a ring of data
// blocks from which files are allocated, the oldest evicted to make room.
type UploadsLayout struct {
	DirectoryBlocks int // each holds uploadSlotsPerBlock file entries
	DataBlocks      int
}

// RepositoryLayout shapes a repository volume: one refs block, then an
// append-only object area.
type RepositoryLayout struct {
	ObjectBlocks int
	Refs         []string // names of the refs pushes advance, at most refNameSizeBytes each
}

// DefaultDatabaseLayout: 8 MiB.
func DefaultDatabaseLayout() DatabaseLayout { return DatabaseLayout{LogBlocks: 1024, PageBlocks: 1023} }

// DefaultUploadsLayout: 16 MiB, 140 files.
func DefaultUploadsLayout() UploadsLayout { return UploadsLayout{DirectoryBlocks: 4, DataBlocks: 4092} }

// DefaultRepositoryLayout: 256 MiB, room for about 6,000 pushes.
func DefaultRepositoryLayout() RepositoryLayout {
	return RepositoryLayout{ObjectBlocks: 65535, Refs: []string{
		"site/main", "site/release", "infra/main", "infra/staging", "docs/main", "api/main",
	}}
}

// Option changes a workload's layout; an option for a volume the workload does
// not have is ignored.
type Option func(*options)

type options struct {
	database   DatabaseLayout
	uploads    UploadsLayout
	repository RepositoryLayout
}

// WithDatabase sets the database volume's layout.
func WithDatabase(layout DatabaseLayout) Option { return func(o *options) { o.database = layout } }

// WithUploads sets the uploads volume's layout.
func WithUploads(layout UploadsLayout) Option { return func(o *options) { o.uploads = layout } }

// WithRepository sets the repository volume's layout.
func WithRepository(layout RepositoryLayout) Option {
	return func(o *options) { o.repository = layout }
}

func buildOptions(opts []Option) options {
	o := options{
		database:   DefaultDatabaseLayout(),
		uploads:    DefaultUploadsLayout(),
		repository: DefaultRepositoryLayout(),
	}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// validate panics on a layout a model cannot run in: layouts are written by
// programs, not read from outside.
func (l DatabaseLayout) validate() {
	if l.LogBlocks < 4*maxLogParts || l.PageBlocks < maxPagesPerTransaction {
		panic(fmt.Sprintf("workload: database layout %+v: at least %d log blocks and %d pages",
			l, 4*maxLogParts, maxPagesPerTransaction))
	}
}

func (l UploadsLayout) validate() {
	if l.DirectoryBlocks < 1 || l.DataBlocks < maxFileBlocks {
		panic(fmt.Sprintf("workload: uploads layout %+v: at least 1 directory block and %d data blocks", l, maxFileBlocks))
	}
}

func (l RepositoryLayout) validate() {
	if l.ObjectBlocks < 1 || len(l.Refs) < 1 || len(l.Refs) > refsPerBlock {
		panic(fmt.Sprintf("workload: repository layout: %d object blocks, %d refs (1 to %d)", l.ObjectBlocks, len(l.Refs), refsPerBlock))
	}
	for _, name := range l.Refs {
		if name == "" || len(name) > refNameSizeBytes {
			panic(fmt.Sprintf("workload: ref name %q must be 1 to %d bytes", name, refNameSizeBytes))
		}
	}
}
