package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
)

// firstChat is the id of the burst's first chat; the "hi" turn uses chat
// firstChat-1, a chat of its own.
const firstChat = 1001

// report is what one bench run measured.
type report struct {
	bin      string // the bot binary measured
	machine  machine
	opts     options
	startups []time.Duration // one per run, sorted
	faults   []int           // minor page faults to the first getUpdates, one per run, sorted
	idle     memory          // after start-up and one message
	hiBody   int             // bytes of the LLM request body for "hi"
	hiText   []byte          // that body
	release  int64           // bytes of the release's bot (-tags nopostgres)
	rounds   int             // rounds combined (-rounds)
	cpu      time.Duration   // bot CPU time over the burst
	burst    time.Duration   // from the first message injected to the last reply sent
	tally    tally
}

// measure builds (or takes) the bot, serves the fakes and takes every
// measurement. Progress goes to progress.
func measure(ctx context.Context, o options, dir string, progress io.Writer) (*report, error) {
	rep := &report{machine: readMachine(), opts: o}
	bin := o.bot
	if bin == "" {
		fmt.Fprintln(progress, "building ./cmd/bot …")
		var err error
		if bin, err = buildBot(ctx, dir, o.cpuprofile != ""); err != nil {
			return nil, err
		}
	}
	rep.bin = bin
	tg := faketg.New(faketg.Options{})
	defer tg.Close()
	ai := fakeopenai.New()
	defer ai.Close()
	// The model echoes the user's message: each reply names its message.
	ai.Respond(func(r fakeopenai.Request) fakeopenai.Step { return fakeopenai.Text("echo: " + r.LastUser()) })
	cfg, err := writeConfig(dir, tg, ai)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "start-up × %d …\n", o.runs)
	for n := range o.runs {
		d, faults, err := startOnce(ctx, bin, cfg, dir, n, tg)
		if err != nil {
			return nil, err
		}
		rep.startups = append(rep.startups, d)
		rep.faults = append(rep.faults, faults)
	}
	slices.Sort(rep.startups)
	slices.Sort(rep.faults)
	fmt.Fprintf(progress, "burst of %d messages over %d chats …\n", o.messages, o.chats)
	if err := rep.steadyState(ctx, bin, cfg, dir, tg, ai); err != nil {
		return nil, err
	}
	return rep, nil
}

// startOnce starts the bot, returns the time from exec to its first
// getUpdates and the minor page faults it took by then (on a virtual
// machine a fault can cost tens of microseconds: most of a start-up), and
// stops it.
func startOnce(ctx context.Context, bin, cfg, dir string, n int, tg *faketg.Server) (time.Duration, int, error) {
	before := len(tg.Polls())
	p, err := startBot(bin, cfg, dir, n)
	if err != nil {
		return 0, 0, err
	}
	// Polled every 100 µs: the figure is in milliseconds.
	if err := p.waitFor(ctx, "the first getUpdates", 100*time.Microsecond, func() bool { return len(tg.Polls()) > before }); err != nil {
		p.kill()
		return 0, 0, err
	}
	d := time.Since(p.started)
	faults, err := readFaults(p.pid())
	if err != nil {
		p.kill()
		return 0, 0, err
	}
	return d, faults, p.stop()
}

// steadyState runs one bot through a "hi" turn (idle memory, LLM body
// size) and then the burst (CPU per message, replies/s, the tally).
func (rep *report) steadyState(ctx context.Context, bin, cfg, dir string, tg *faketg.Server, ai *fakeopenai.Server) error {
	var env []string
	if rep.opts.cpuprofile != "" {
		abs, err := filepath.Abs(rep.opts.cpuprofile)
		if err != nil {
			return fmt.Errorf("cpuprofile: %w", err)
		}
		env = append(env, "GATEHOUSE_CPUPROFILE="+abs)
	}
	p, err := startBot(bin, cfg, dir, rep.opts.runs, env...)
	if err != nil {
		return err
	}
	defer p.kill()
	if err := rep.hi(ctx, p, tg, ai); err != nil {
		return err
	}
	if rep.idle, err = readMemory(p.pid()); err != nil {
		return err
	}
	if err := rep.runBurst(ctx, p, tg); err != nil {
		return err
	}
	if err := p.stop(); err != nil {
		return err
	}
	// Tallied once the bot has stopped: a late duplicate is counted too.
	rep.tally = tallyReplies(tg.Sent(), rep.opts.messages, rep.opts.chats)
	return nil
}

// hi sends "hi" in a chat of its own and waits for the reply.
func (rep *report) hi(ctx context.Context, p *botProcess, tg *faketg.Server, ai *fakeopenai.Server) error {
	chat := int64(firstChat - 1)
	tg.InjectMessage(faketg.Message{From: &faketg.User{ID: chat, FirstName: "bench"}, Chat: faketg.Chat{ID: chat, Type: "private"}, Text: "hi"})
	if err := p.waitFor(ctx, `the reply to "hi"`, time.Millisecond, func() bool { return tg.Calls("sendMessage") > 0 }); err != nil {
		return err
	}
	for _, r := range ai.Requests() {
		if r.LastUser() == "hi" {
			rep.hiBody, rep.hiText = r.BodySize, r.Body
			return nil
		}
	}
	return fmt.Errorf(`no LLM request for "hi" (%d requests)`, len(ai.Requests()))
}

// runBurst injects every message of the burst at once, round robin over
// the chats, and waits until as many replies as messages were sent. A
// stall (no new reply for the hang guard) ends the wait; the tally then
// counts what is missing.
func (rep *report) runBurst(ctx context.Context, p *botProcess, tg *faketg.Server) error {
	base := tg.Calls("sendMessage")
	cpu0, err := readCPU(p.pid())
	if err != nil {
		return err
	}
	start := time.Now()
	for i := range rep.opts.messages {
		chat := int64(firstChat + i%rep.opts.chats)
		tg.InjectMessage(faketg.Message{From: &faketg.User{ID: chat, FirstName: "bench"}, Chat: faketg.Chat{ID: chat, Type: "private"}, Text: messageText(i)})
	}
	want := base + rep.opts.messages
	last, lastAt := base, time.Now()
	for {
		n := tg.Calls("sendMessage")
		if n >= want {
			break
		}
		if n != last {
			last, lastAt = n, time.Now()
		}
		if time.Since(lastAt) > hangGuard {
			break // stalled: the tally reports the loss
		}
		if done, err := p.exited(); done {
			return fmt.Errorf("the bot exited during the burst (%v)\n%s", err, p.logTail())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	cpu1, err := readCPU(p.pid())
	if err != nil {
		return err
	}
	rep.cpu = cpu1 - cpu0
	rep.burst = lastReplyAt(tg.Sent(), start).Sub(start)
	return nil
}

// messageText is the burst's message i; its echo identifies it.
func messageText(i int) string { return "m-" + strconv.Itoa(i) }

// lastReplyAt is when the last message at or after start was sent.
func lastReplyAt(sent []faketg.Sent, start time.Time) time.Time {
	last := start
	for _, s := range sent {
		if s.Method == "sendMessage" && s.At.After(last) {
			last = s.At
		}
	}
	return last
}
