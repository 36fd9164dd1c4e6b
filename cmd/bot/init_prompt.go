package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// maxAnswer bounds one answer's line.
const maxAnswer = 64 << 10

// prompter asks bot init's questions: on a terminal (a secret's input not
// shown), or from piped lines (their end takes the defaults), or, with
// yes, not at all.
type prompter struct {
	ctx   context.Context
	out   io.Writer
	yes   bool
	tty   *os.File // stdin when it is a terminal: secrets are read with its echo off
	lines chan string
	ended bool
}

// newPrompter reads stdin's lines in a goroutine that ends with stdin
// (the process ends with bot init; a terminal's read cannot be cancelled).
func newPrompter(ctx context.Context, stdin io.Reader, stdout io.Writer, yes bool) *prompter {
	p := &prompter{ctx: ctx, out: stdout, yes: yes, lines: make(chan string)}
	if f, ok := stdin.(*os.File); ok && isTerminal(f) {
		p.tty = f
	}
	if yes {
		close(p.lines)
		return p
	}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 0, 4096), maxAnswer)
		for sc.Scan() {
			select {
			case p.lines <- strings.TrimSpace(strings.TrimRight(sc.Text(), "\r")):
			case <-ctx.Done():
				return
			}
		}
	}()
	return p
}

// say prints one line.
func (p *prompter) say(format string, args ...any) {
	fmt.Fprintf(p.out, format+"\n", args...)
}

// errInterrupted ends bot init on Ctrl-C.
var errInterrupted = errors.New("interrupted: nothing written")

// readLine returns the next answer, "" once input has ended.
func (p *prompter) readLine() (string, error) {
	if p.ended {
		return "", nil
	}
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.ended = true
			return "", nil
		}
		return l, nil
	case <-p.ctx.Done():
		return "", errInterrupted
	}
}

// ask asks question and returns the answer, def when it is empty.
func (p *prompter) ask(question, def string) (string, error) {
	if p.yes {
		return def, nil
	}
	fmt.Fprintf(p.out, "%s [%s]: ", question, def)
	a, err := p.readLine()
	if p.tty == nil || p.ended {
		fmt.Fprintln(p.out) // piped: the answer is not echoed
	}
	if err != nil || a == "" {
		return def, err
	}
	return a, nil
}

// askPlain asks a question whose answer config.yaml holds as it is (the
// LLM's base URL, the model). An answer shaped like a token or key, a
// secret pasted at the wrong question, is not taken: asked again on a
// terminal, an error otherwise; it is not shown either way.
func (p *prompter) askPlain(question, def string) (string, error) {
	for {
		a, err := p.ask(question, def)
		if err != nil || !secrets.LooksLikeKey(a) {
			return a, err
		}
		if p.tty == nil || p.ended {
			return "", initUsageErr("%s: %s: config.yaml is no place for it; keys are asked for at their own question, hidden", question, quoteAnswer(a))
		}
		p.say("  That looks like a token or key: config.yaml is no place for it. Keys are asked for at their own question, hidden.")
	}
}

// secret asks for a secret named env; def (the environment's value) is
// taken when the answer is empty, and is never shown. On a terminal the
// input is not echoed.
func (p *prompter) secret(question, env, def string) (string, error) {
	if p.yes {
		return def, nil
	}
	hint := "none"
	if def != "" {
		hint = "$" + env + " from the environment"
	}
	if p.tty != nil {
		restore, err := echoOff(p.tty)
		if err != nil {
			return "", fmt.Errorf("%w: cannot hide what is typed on this terminal (%v): pipe the answers, or use -yes with %s in the environment", errInitUsage, err, env)
		}
		defer restore()
	}
	fmt.Fprintf(p.out, "%s, not shown [%s]: ", question, hint)
	a, err := p.readLine()
	fmt.Fprintln(p.out) // the Enter typed was not echoed either
	if err != nil || a == "" {
		return def, err
	}
	return a, nil
}

// mayOverwrite asks before replacing an existing file; with -yes, or no
// answer, it is not replaced and nothing is written.
func (p *prompter) mayOverwrite(path string) error {
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	a, err := p.ask(path+" exists. Overwrite it?", "no")
	if err != nil {
		return err
	}
	switch strings.ToLower(a) {
	case "y", "yes":
		return nil
	}
	how := "answer yes to replace it"
	if p.yes {
		how = "-yes never replaces a file: move it away, or run bot init without -yes"
	}
	return fmt.Errorf("%w: %s exists (%s)", errNotWritten, path, how)
}
