package console

import (
	"bufio"
	"errors"
	"io"
	"strings"
)

// MaxLine is the longest line, in bytes, the console submits; the rest of
// a longer line is read and dropped.
const MaxLine = 1 << 20

// tooLongNotice tells the user a line was cut.
const tooLongNotice = "line too long: cut to 1 MiB"

// lineReader reads lines of at most MaxLine bytes. Unlike bufio.Scanner it
// does not stop at a long line: it keeps the first MaxLine bytes, drops the
// rest and goes on with the next line.
type lineReader struct {
	r *bufio.Reader
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line without its newline, and whether it was cut.
// At the end of input it returns the last, unterminated line (possibly
// empty) with io.EOF; on a read error, what it read of the line with the
// error.
func (l *lineReader) next() (line string, cut bool, err error) {
	var b []byte
	for {
		chunk, err := l.r.ReadSlice('\n')
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		room := MaxLine - len(b)
		if len(chunk) > room {
			chunk, cut = chunk[:room], true
		}
		b = append(b, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = string(b)
		if cut {
			line = strings.ToValidUTF8(line, "") // the cut may split a character
		}
		return line, cut, err
	}
}
