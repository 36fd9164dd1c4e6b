//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package console

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// enterKeyMode switches the terminal f from its own line editing to
// handing over each key as it is typed, without echo (ICANON, ECHO and
// IEXTEN off; ISIG stays on, so Ctrl-C and Ctrl-Z still signal the bot):
// the terminal's line editing cuts a line at 4,095 bytes (1,024 on macOS)
// and drops the rest without a word, so keyReader edits the line instead.
// leave puts the terminal back as it was found. Until then the mode is set
// again when the bot resumes after a stop (Ctrl-Z, fg), since the shell
// restores its own terminal settings meanwhile.
func enterKeyMode(f *os.File) (leave func(), err error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, fmt.Errorf("console: read the terminal's mode: %w", err)
	}
	keys := *old
	keys.Lflag &^= unix.ICANON | unix.ECHO | unix.IEXTEN
	keys.Cc[unix.VMIN], keys.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &keys); err != nil {
		return nil, fmt.Errorf("console: set the terminal's mode: %w", err)
	}
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-cont:
				unix.IoctlSetTermios(fd, ioctlSetTermios, &keys) //nolint:errcheck // the terminal is gone or not ours any more
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(cont)
		close(done)
		<-stopped
		unix.IoctlSetTermios(fd, ioctlSetTermios, old) //nolint:errcheck // nothing better to do with a terminal that is gone
	}, nil
}
