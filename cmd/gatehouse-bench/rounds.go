package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// measureAll measures this build and, with -baseline, the baseline's in
// -rounds alternating rounds (a machine's load changes by the minute:
// alternating spreads it over both), each with its release binary's size
// (outside the module, with -bot and no baseline, the size is not
// measured).
func measureAll(ctx context.Context, o options, dir string, progress io.Writer) (rep, base *report, err error) {
	root, rootErr := moduleRoot(ctx)
	if o.bot == "" {
		fmt.Fprintln(progress, "building ./cmd/bot …")
		if o.bot, err = buildBot(ctx, dir, o.cpuprofile != ""); err != nil {
			return nil, nil, err
		}
	}
	var baseBin, baseSrc string
	if o.baseline != "" {
		if rootErr != nil {
			return nil, nil, rootErr
		}
		if baseBin, baseSrc, err = buildBaseline(ctx, o, root, dir, progress); err != nil {
			return nil, nil, err
		}
	}
	rounds := 1
	if o.baseline != "" {
		rounds = o.rounds
	}
	var reps, bases []*report
	for r := range rounds {
		ro := o
		if r > 0 {
			ro.cpuprofile = "" // the first round's profile is kept
		}
		one, err := measureIn(ctx, ro, filepath.Join(dir, fmt.Sprintf("change-%d", r)), progress)
		if err != nil {
			return nil, nil, err
		}
		reps = append(reps, one)
		if baseBin == "" {
			continue
		}
		bo := o
		bo.bot, bo.cpuprofile = baseBin, ""
		if one, err = measureIn(ctx, bo, filepath.Join(dir, fmt.Sprintf("baseline-%d", r)), progress); err != nil {
			return nil, nil, fmt.Errorf("baseline %s: %w", o.baseline, err)
		}
		bases = append(bases, one)
	}
	rep = combine(reps)
	if rootErr != nil {
		return rep, nil, nil
	}
	if rep.release, err = releaseSize(ctx, root, dir); err != nil {
		return nil, nil, err
	}
	if baseBin != "" {
		base = combine(bases)
		if base.release, err = releaseSize(ctx, baseSrc, filepath.Join(dir, "baseline-release")); err != nil {
			return nil, nil, err
		}
	}
	return rep, base, nil
}

// measureIn runs measure in a fresh directory (a fresh database).
func measureIn(ctx context.Context, o options, dir string, progress io.Writer) (*report, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return measure(ctx, o, dir, progress)
}

// combine merges the rounds of one build: every start-up, the round of
// the median CPU per message for the burst's figures (its CPU, duration
// and tally), the first round's memory and request; a round that lost,
// merged or duplicated a message is the one reported, so a failure is
// never hidden by the median.
func combine(reps []*report) *report {
	out := *reps[0]
	out.startups, out.faults = nil, nil
	for _, r := range reps {
		out.startups = append(out.startups, r.startups...)
		out.faults = append(out.faults, r.faults...)
	}
	slices.Sort(out.startups)
	slices.Sort(out.faults)
	byCPU := slices.Clone(reps)
	slices.SortFunc(byCPU, func(a, b *report) int { return int(a.cpu - b.cpu) })
	pick := byCPU[len(byCPU)/2]
	for _, r := range reps {
		if !r.tally.ok() {
			pick = r
			break
		}
	}
	out.cpu, out.burst, out.tally = pick.cpu, pick.burst, pick.tally
	out.rounds = len(reps)
	return &out
}

// cpuPerMessage is the CPU time of the burst divided by its messages.
func (r *report) cpuPerMessage() time.Duration {
	return r.cpu / time.Duration(max(r.tally.messages, 1))
}
