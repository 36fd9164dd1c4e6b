//go:build !unix

package tools

// Where the system has no O_NOFOLLOW, O_NONBLOCK or O_DIRECTORY (Windows)
// the opens go without them: os.Root still keeps every open inside the
// workspace, a regular-file check follows each file's open, and reading a
// file as a directory fails. gatehouse targets Unix.
const (
	oNoFollow  = 0
	oNonBlock  = 0
	oDirectory = 0
)
