package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// Store keeps what approvers decided of skills (store.Skills), shared by
// the instances.
type Store interface {
	SetSkillState(ctx context.Context, st record.SkillState) error
	SkillStates(ctx context.Context) ([]record.SkillState, error)
}

// Audit is the audit log (store.Audit).
type Audit interface {
	AppendAudit(ctx context.Context, e record.AuditEntry) error
}

// DefaultRefresh is how old the catalog's look at the folders and the
// store may be before a turn looks again: a file edited, or a skill
// approved on another instance, shows within it.
const DefaultRefresh = 5 * time.Second

// Options configure a Catalog.
type Options struct {
	// Dirs are the skills folders, in order: a name found in two is the
	// first's. The first is where write_skill writes.
	Dirs []string
	// MaxListed bounds the skills listed to the model in one
	// conversation (default DefaultMaxListed).
	MaxListed int
	Store     Store
	// Audit, when set, records each skill enabled or disabled, and by
	// whom (Tool "skill", Outcome "skill-enabled" or "skill-disabled").
	Audit Audit
	// Profiles give a conversation's profile's skills globs; may be nil.
	Profiles *core.Profiles
	// Ask, when set, asks the approvers to enable a skill found new or
	// changed (once per content and process), without the catalog's lock
	// held: the wiring holds EnableCall for approval.
	Ask func(ctx context.Context, sk *Skill)
	// Refresh is DefaultRefresh when 0.
	Refresh time.Duration
	Now     func() time.Time
	Log     zerolog.Logger
}

// Status is what a skill on disk is to the conversations.
type Status uint8

// The statuses.
const (
	// Pending: new, or changed since enabled; not offered.
	Pending Status = iota + 1
	// Enabled: its exact content is approved; offered.
	Enabled
	// Disabled by an approver; not offered.
	Disabled
)

func (s Status) String() string {
	switch s {
	case Enabled:
		return "enabled"
	case Disabled:
		return "disabled"
	}
	return "pending"
}

// Catalog is the skills on disk beside what the store says of them.
type Catalog struct {
	o Options

	mu       sync.Mutex
	snap     *snapshot
	notified map[string]string // name → digest asked for already
}

// snapshot is one look at the folders and the store.
type snapshot struct {
	at       time.Time
	skills   []*Skill // loaded and valid, by name
	problems []Problem
	states   map[string]record.SkillState
	warned   bool   // the prompt's budget left skills out: warned once
	print    string // statPrint of the folders when read
}

// NewCatalog returns a Catalog; nothing is read before the first use
// (or Refresh).
func NewCatalog(o Options) *Catalog {
	if o.MaxListed <= 0 {
		o.MaxListed = DefaultMaxListed
	}
	if o.Refresh <= 0 {
		o.Refresh = DefaultRefresh
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Catalog{o: o, notified: map[string]string{}}
}

// Dirs are the skills folders.
func (c *Catalog) Dirs() []string { return c.o.Dirs }

// Refresh looks at the folders and the store again now, and asks the
// approvers about skills found new or changed.
func (c *Catalog) Refresh(ctx context.Context) error {
	c.mu.Lock()
	err := c.refreshLocked(ctx, true)
	ask := c.toAsk()
	c.mu.Unlock()
	c.ask(ctx, ask)
	return err
}

// view returns the current look, taken again when older than Refresh. A
// store that does not answer keeps the last states it gave (none at
// first: nothing is offered).
func (c *Catalog) view(ctx context.Context) *snapshot {
	c.mu.Lock()
	var ask []*Skill
	if c.snap == nil || c.o.Now().Sub(c.snap.at) >= c.o.Refresh {
		if err := c.refreshLocked(ctx, false); err != nil {
			c.o.Log.Warn().Err(err).Msg("skills: the store's approvals not read; the last known kept")
		}
		ask = c.toAsk()
	}
	s := c.snap
	c.mu.Unlock()
	c.ask(ctx, ask)
	return s
}

// refreshLocked looks at the store's states again, and at the folders:
// read and digested again when full, or when their names, sizes, modes
// or times changed (statPrint). The caller holds c.mu.
func (c *Catalog) refreshLocked(ctx context.Context, full bool) error {
	s := &snapshot{at: c.o.Now(), states: map[string]record.SkillState{}, print: statPrint(c.o.Dirs)}
	if !full && c.snap != nil && s.print != "" && s.print == c.snap.print {
		s.skills, s.problems = c.snap.skills, c.snap.problems
	} else {
		s.skills, s.problems = load(c.o.Dirs)
	}
	var err error
	if c.o.Store != nil {
		var states []record.SkillState
		if states, err = c.o.Store.SkillStates(ctx); err == nil {
			for _, st := range states {
				s.states[st.Name] = st
			}
		} else if c.snap != nil {
			s.states = c.snap.states
		}
	}
	c.snap = s
	if err != nil {
		return fmt.Errorf("skills: %w", err)
	}
	return nil
}

// load reads the skills of dirs: a name found in two is the first's.
func load(dirs []string) (skills []*Skill, problems []Problem) {
	seen := map[string]string{}
	for _, dir := range dirs {
		list, probs, err := Load(dir)
		if err != nil {
			problems = append(problems, Problem{Dir: dir, Field: "skills.dirs", Rule: err.Error()})
			continue
		}
		problems = append(problems, probs...)
		for _, sk := range list {
			if first, dup := seen[sk.Name]; dup {
				problems = append(problems, Problem{Dir: dir, Skill: sk.Name, Field: "name", Warning: true,
					Rule: "also in " + first + ", whose skill is used"})
				continue
			}
			seen[sk.Name] = dir
			skills = append(skills, sk)
		}
	}
	slices.SortFunc(skills, func(a, b *Skill) int { return strings.Compare(a.Name, b.Name) })
	return skills, problems
}

// status is sk's status in s.
func (s *snapshot) status(sk *Skill) Status {
	st, ok := s.states[sk.Name]
	switch {
	case ok && !st.Enabled:
		return Disabled
	case ok && st.Digest == sk.Digest:
		return Enabled
	}
	return Pending
}

func (s *snapshot) find(name string) *Skill {
	for _, sk := range s.skills {
		if sk.Name == name {
			return sk
		}
	}
	return nil
}

// toAsk returns the pending skills not asked for at their content yet,
// and marks them asked. The caller holds c.mu.
func (c *Catalog) toAsk() []*Skill {
	var out []*Skill
	for _, sk := range c.snap.skills {
		if c.snap.status(sk) != Pending || c.notified[sk.Name] == sk.Digest {
			continue
		}
		c.notified[sk.Name] = sk.Digest
		out = append(out, sk)
	}
	return out
}

// ask asks the approvers about each of list, without c.mu held.
func (c *Catalog) ask(ctx context.Context, list []*Skill) {
	for _, sk := range list {
		c.o.Log.Warn().Str("skill", sk.Name).Str("digest", sk.Short()).Msg("skills: skill pending approval (not offered)")
		if c.o.Ask != nil {
			c.o.Ask(ctx, sk)
		}
	}
}

// maxFilesNamed bounds the files an approval request names.
const maxFilesNamed = 10

// Request is the approval request for sk: its files with their sizes and
// how to enable exactly this content.
func Request(sk *Skill) string {
	var files []string
	for i, f := range sk.Files {
		if i == maxFilesNamed {
			files = append(files, fmt.Sprintf("and %d more", len(sk.Files)-i))
			break
		}
		files = append(files, textShown(f.Path, 120)+" "+sizeText(f.Size))
	}
	noun := "files"
	if len(sk.Files) == 1 {
		noun = "file"
	}
	return fmt.Sprintf("Skill pending approval: enable skill `%s`: %d %s, %s (digest %s).\n"+
		"Description: %s\nAn approver enables exactly this content with /skill %s enable %s (or `bot skills approve %s`).",
		sk.Name, len(sk.Files), noun, strings.Join(files, ", "), sk.Short(),
		textShown(sk.Description, 300), sk.Name, sk.Short(), sk.Name)
}

// globs returns conv's profile's skills globs; nil is every skill.
func (c *Catalog) globs(conv core.Conversation) []string {
	if p := c.o.Profiles.For(conv); p != nil {
		return p.Skills
	}
	return nil
}

// allowedIn reports whether globs let a conversation use the skill name.
func allowedIn(globs []string, name string) bool {
	if globs == nil {
		return true
	}
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// Offered returns the enabled skills conv may use, by name.
func (c *Catalog) Offered(ctx context.Context, conv core.Conversation) []*Skill {
	s := c.view(ctx)
	globs := c.globs(conv)
	var out []*Skill
	for _, sk := range s.skills {
		if s.status(sk) == Enabled && allowedIn(globs, sk.Name) {
			out = append(out, sk)
		}
	}
	return out
}

// promptHead begins the system prompt's list of skills.
const promptHead = "Skills (load one with the skill tool when a task matches; run its scripts only through shell):"

// SkillPrompt is the system prompt's list of the skills conv may use,
// name and description only, bounded by MaxListed and PromptBudget; ""
// when it may use none (the request then does not grow). It implements
// core.SkillLister.
func (c *Catalog) SkillPrompt(ctx context.Context, conv core.Conversation) string {
	list := c.Offered(ctx, conv)
	if len(list) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(promptHead)
	listed := 0
	for _, sk := range list {
		line := "\n- " + sk.Name + ": " + oneLine(sk.Description)
		if listed == c.o.MaxListed || b.Len()+len(line) > PromptBudget {
			break
		}
		b.WriteString(line)
		listed++
	}
	if listed < len(list) {
		c.warnLeftOut(conv, listed, len(list))
	}
	return b.String()
}

// warnLeftOut warns once per look that skills were left out of a prompt.
func (c *Catalog) warnLeftOut(conv core.Conversation, listed, all int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap == nil || c.snap.warned {
		return
	}
	c.snap.warned = true
	c.o.Log.Warn().Str("conv", conv.Key()).Int("listed", listed).Int("enabled", all).Int("max_listed", c.o.MaxListed).
		Msg("skills: more enabled skills than the prompt lists (skills.max_listed, or its byte budget); the rest are left out")
}

// oneLine is a description on one line, whitespace folded.
func oneLine(s string) string { return textShown(strings.Join(strings.Fields(s), " "), MaxDescription) }

// Entry is one skill on disk with its status, for /skills and `bot
// skills list`.
type Entry struct {
	Skill  *Skill
	Status Status
	State  record.SkillState // zero when none is recorded
}

// List returns every skill loaded from the folders with its status, and
// the problems of those that were not (or warnings).
func (c *Catalog) List(ctx context.Context) ([]Entry, []Problem) {
	s := c.view(ctx)
	out := make([]Entry, 0, len(s.skills))
	for _, sk := range s.skills {
		out = append(out, Entry{Skill: sk, Status: s.status(sk), State: s.states[sk.Name]})
	}
	return out, s.problems
}

// ErrUnknown: no valid skill of that name is in the folders.
var ErrUnknown = errors.New("no such skill")

// Approve enables the skill name's content as it is now, by by; when
// want is not "", that content's digest must begin with it (what the
// approver saw). It returns the skill enabled.
func (c *Catalog) Approve(ctx context.Context, name, want string, by core.Identity) (*Skill, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.refreshLocked(ctx, true); err != nil {
		return nil, err
	}
	sk := c.snap.find(name)
	if sk == nil {
		return nil, fmt.Errorf("%w %q in %s", ErrUnknown, textShown(name, MaxName+8), strings.Join(c.o.Dirs, ", "))
	}
	if want != "" && !strings.HasPrefix(sk.Digest, want) {
		return nil, fmt.Errorf("skill %s changed: its digest is now %s, not %s; look again (/skills) before enabling it",
			name, sk.Short(), textShown(want, 64))
	}
	return sk, c.setLocked(ctx, record.SkillState{Name: sk.Name, Digest: sk.Digest, Enabled: true, By: by, At: c.o.Now().UTC()})
}

// Disable stops offering the skill name, by by.
func (c *Catalog) Disable(ctx context.Context, name string, by core.Identity) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.refreshLocked(ctx, true); err != nil {
		return err
	}
	d := c.snap.states[name].Digest
	if sk := c.snap.find(name); sk != nil {
		d = sk.Digest
	}
	if d == "" {
		return fmt.Errorf("%w %q", ErrUnknown, textShown(name, MaxName+8))
	}
	return c.setLocked(ctx, record.SkillState{Name: name, Digest: d, Enabled: false, By: by, At: c.o.Now().UTC()})
}

func (c *Catalog) setLocked(ctx context.Context, st record.SkillState) error {
	if c.o.Store == nil {
		return errors.New("skills: no store")
	}
	if err := c.o.Store.SetSkillState(ctx, st); err != nil {
		return fmt.Errorf("skills: %w", err)
	}
	c.snap.states[st.Name] = st
	c.audit(ctx, st)
	return nil
}

// audit records st in the audit log, when there is one.
func (c *Catalog) audit(ctx context.Context, st record.SkillState) {
	if c.o.Audit == nil {
		return
	}
	outcome := "skill-disabled"
	if st.Enabled {
		outcome = "skill-enabled"
	}
	args, _ := json.Marshal(map[string]string{"name": st.Name, "digest": st.Digest})
	e := record.AuditEntry{At: st.At, Tool: core.SkillTool, Args: string(args), RequestedBy: st.By, ApprovedBy: st.By,
		Outcome: outcome, Detail: "sha256:" + st.Digest}
	if err := c.o.Audit.AppendAudit(ctx, e); err != nil {
		c.o.Log.Error().Err(err).Str("skill", st.Name).Msg("skills: audit not recorded")
	}
}
