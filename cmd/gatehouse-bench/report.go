package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// machine describes where the figures were taken.
type machine struct {
	cores  int
	cpu    string
	goVer  string
	kernel string
}

// readMachine reads the machine's description; unknown parts read "?".
func readMachine() machine {
	m := machine{cores: runtime.NumCPU(), cpu: "?", goVer: runtime.Version(), kernel: "?"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if name, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "model name" {
				m.cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = strings.TrimSpace(string(b))
	}
	return m
}

// print writes the report as a Markdown table, ready for docs/speed.md,
// with a column for base (measured from the git ref baseRef) when it is
// not nil.
func (r *report) print(w io.Writer, base *report, baseRef string) {
	m := r.machine
	fmt.Fprintf(w, "\nmachine: %d cores, %s, %s, Linux %s; %s UTC\n\n", m.cores, m.cpu, m.goVer, m.kernel, time.Now().UTC().Format("2006-01-02 15:04"))
	rows := r.rows()
	if base == nil {
		fmt.Fprintln(w, "| what | figure |")
		fmt.Fprintln(w, "| --- | --- |")
		for _, row := range rows {
			fmt.Fprintf(w, "| %s | %s |\n", row[0], row[1])
		}
	} else {
		fmt.Fprintf(w, "| what | this build | %s |\n", baseRef)
		fmt.Fprintln(w, "| --- | --- | --- |")
		for i, row := range rows {
			fmt.Fprintf(w, "| %s | %s | %s |\n", row[0], row[1], base.rows()[i][1])
		}
	}
	t := r.tally
	fmt.Fprintf(w, "\nThe pacer sends at most 1 message a second per chat and 30 a second overall (Telegram's limits):\n"+
		"%d replies over %d chats cannot take less than %s.\n", t.messages, r.opts.chats, floor(t.messages, r.opts.chats).Round(100*time.Millisecond))
}

// rows are the report's figures: what, and the figure.
func (r *report) rows() [][2]string {
	t := r.tally
	return [][2]string{
		{"idle RSS after start-up and one message (VmRSS / VmHWM; of the RSS: anonymous + file)",
			fmt.Sprintf("%s / %s (%s + %s)", mib(r.idle.rssKiB), mib(r.idle.hwmKiB), mib(r.idle.anonKiB), mib(r.idle.fileKiB))},
		{fmt.Sprintf("start-up: exec to first `getUpdates` (median of %d; min–max)", len(r.startups)),
			fmt.Sprintf("%s (%s–%s)", ms(median(r.startups)), ms(r.startups[0]), ms(r.startups[len(r.startups)-1]))},
		{fmt.Sprintf("CPU time per message (utime+stime over %d messages%s)", t.messages, roundsNote(r.rounds)), ms(r.cpuPerMessage())},
		{fmt.Sprintf("replies/s, %d messages over %d chats", t.messages, r.opts.chats),
			fmt.Sprintf("%.1f (%d in %s)", float64(t.replies)/r.burst.Seconds(), t.replies, r.burst.Round(time.Millisecond))},
		{"messages lost / merged / duplicated (misrouted, unidentified)",
			fmt.Sprintf("%d / %d / %d (%d, %d)", t.lost, t.merged, t.duplicated, t.misrouted, t.unidentified)},
		{`LLM request body of a one-word turn ("hi")`, fmt.Sprintf("%d bytes", r.hiBody)},
		{"release `bot` (SQLite only: -tags nopostgres,nethttpomithttp2, -trimpath -s -w, this machine's GOOS/GOARCH)", bytesOrUnknown(r.release)},
	}
}

// floor is the least time the pacer lets n replies over chats take:
// per chat, ceil(n/chats)-1 seconds after its first; overall, the 30/s
// window.
func floor(n, chats int) time.Duration {
	perChat := time.Duration((n+chats-1)/chats-1) * time.Second
	overall := time.Duration((n+29)/30-1) * time.Second
	return max(perChat, overall)
}

func median(d []time.Duration) time.Duration { return d[len(d)/2] }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func mib(kib int) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }

func bytesOrUnknown(n int64) string {
	if n == 0 {
		return "?"
	}
	return fmt.Sprintf("%d bytes", n)
}

func roundsNote(n int) string {
	if n < 2 {
		return ""
	}
	return fmt.Sprintf("; the median of %d rounds", n)
}
