package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
)

// idleSettle is how long the bot is left alone after its first getUpdates
// before its memory is read: what runs once after the first poll (the
// first prune) has run by then.
const idleSettle = 500 * time.Millisecond

// startupFigures are one binary's start-ups and its memory after start.
type startupFigures struct {
	bin      string
	startups []time.Duration // sorted
	idle     []memory        // one per run, after idleSettle
}

// measureVersus starts each of bins -runs times, interleaved (this build,
// then the other, and again), on a database of its own, and takes the time
// from exec to the first getUpdates and the memory after start (-versus:
// a build of main before a change beside the change, on a machine whose
// load moves by the minute).
func measureVersus(ctx context.Context, o options, bins []string, dir string, progress io.Writer) ([]startupFigures, error) {
	tg := faketg.New(faketg.Options{})
	defer tg.Close()
	ai := fakeopenai.New()
	defer ai.Close()
	figs := make([]startupFigures, len(bins))
	cfgs := make([]string, len(bins))
	for i, bin := range bins {
		figs[i].bin = bin
		sub := filepath.Join(dir, fmt.Sprintf("versus-%d", i))
		if err := os.MkdirAll(sub, 0o700); err != nil {
			return nil, fmt.Errorf("versus: %w", err)
		}
		var err error
		if cfgs[i], err = writeConfig(sub, tg, ai); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(progress, "start-up and memory after start × %d, interleaved, of %d binaries …\n", o.runs, len(bins))
	for n := range o.runs + 1 { // run 0 creates each database and is not counted
		for i, bin := range bins {
			d, m, err := startIdle(ctx, bin, cfgs[i], filepath.Dir(cfgs[i]), n, tg)
			if err != nil {
				return nil, err
			}
			if n > 0 {
				figs[i].startups = append(figs[i].startups, d)
				figs[i].idle = append(figs[i].idle, m)
			}
		}
	}
	for i := range figs {
		slices.Sort(figs[i].startups)
		slices.SortFunc(figs[i].idle, func(a, b memory) int { return a.rssKiB - b.rssKiB })
	}
	return figs, nil
}

// startIdle starts the bot, takes the time to its first getUpdates and,
// idleSettle later, its memory, and stops it.
func startIdle(ctx context.Context, bin, cfg, dir string, n int, tg *faketg.Server) (time.Duration, memory, error) {
	before := len(tg.Polls())
	p, err := startBot(bin, cfg, dir, n)
	if err != nil {
		return 0, memory{}, err
	}
	if err := p.waitFor(ctx, "the first getUpdates", 100*time.Microsecond, func() bool { return len(tg.Polls()) > before }); err != nil {
		p.kill()
		return 0, memory{}, err
	}
	d := time.Since(p.started)
	select {
	case <-ctx.Done():
		p.kill()
		return 0, memory{}, ctx.Err()
	case <-time.After(idleSettle):
	}
	m, err := readMemory(p.pid())
	if err != nil {
		p.kill()
		return 0, memory{}, err
	}
	return d, m, p.stop()
}

// printVersus writes the interleaved figures as a Markdown table, a
// column a binary, with the ratio of each to the first's.
func printVersus(w io.Writer, figs []startupFigures) {
	fmt.Fprintf(w, "\nstart-up and memory after start, interleaved, median of %d runs each (min–max):\n\n", len(figs[0].startups))
	fmt.Fprint(w, "| binary | start-up: exec to first `getUpdates` | RSS after start (anonymous + file) |\n| --- | --- | --- |\n")
	for _, f := range figs {
		s, m := f.startups, f.idle[len(f.idle)/2]
		fmt.Fprintf(w, "| %s | %s (%s–%s) | %s (%s + %s) |\n", f.bin, ms(s[len(s)/2]), ms(s[0]), ms(s[len(s)-1]),
			mib(m.rssKiB), mib(m.anonKiB), mib(m.fileKiB))
	}
	if len(figs) > 1 {
		a, b := figs[0].startups, figs[1].startups
		fmt.Fprintf(w, "\nstart-up of the first ÷ the second: %.2f\n", float64(a[len(a)/2])/float64(b[len(b)/2]))
	}
}
