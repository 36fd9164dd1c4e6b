package tools

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// Defaults of Options.
const (
	DefaultTimeout   = 120 * time.Second
	DefaultMaxOutput = 16 << 10
)

// Options configure a Registry. The zero value gives the defaults.
type Options struct {
	// DefaultTimeout bounds a run of a tool whose Spec has no Timeout
	// (default 120s).
	DefaultTimeout time.Duration
	// Timeouts overrides the timeout per tool name; it wins over Spec.Timeout.
	Timeouts map[string]time.Duration
	// MaxOutput caps a result's output in bytes (default 16384).
	MaxOutput int
	// Secrets, when set, are removed from every output before it is capped.
	Secrets *secrets.Set
	// Checkpointer, when set, records the workspace before Act runs a tool
	// that is not ReadOnly.
	Checkpointer Checkpointer
	// Log receives one debug line per run and the stack of a crashed tool.
	Log zerolog.Logger
}

// Registry holds the tools the agent may call and runs them with a timeout,
// an output cap and panic recovery. It is safe for concurrent use.
type Registry struct {
	opts Options

	mu    sync.RWMutex
	tools map[string]*entry
	specs []llm.ToolSpec // sorted by name, rebuilt on Register, never mutated

	grace time.Duration // killGrace; shorter in tests
}

// entry is a registered tool with what the registry derived from its Spec.
type entry struct {
	tool    Tool
	spec    Spec
	timeout time.Duration
	args    argSchema
}

var (
	_ core.Actuator    = (*Registry)(nil)
	_ core.ToolCatalog = (*Registry)(nil)
)

// validName reports whether name is what OpenAI-compatible APIs accept as
// a function name.
func validName(name string) bool { return textutil.Shape(name, 1, 64, textutil.Word) }

// ErrDuplicate is returned by Register for a name already registered.
var ErrDuplicate = errors.New("tools: duplicate tool")

// NewRegistry returns an empty Registry.
func NewRegistry(opts Options) *Registry {
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = DefaultTimeout
	}
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = DefaultMaxOutput
	}
	return &Registry{opts: opts, tools: make(map[string]*entry), grace: killGrace}
}

// Register adds a tool. A duplicate name, a name an LLM API would refuse, or
// a Parameters schema that is not a JSON Schema object is an error. Empty
// Parameters mean "no arguments".
func (r *Registry) Register(t Tool) error {
	spec := t.Spec()
	if !validName(spec.Name) {
		return fmt.Errorf("tools: register: invalid name %q (want [A-Za-z0-9_-]{1,64})", spec.Name)
	}
	if len(spec.Parameters) == 0 {
		spec.Parameters = emptySchema
	}
	schema, err := parseSchema(spec.Parameters)
	if err != nil {
		return fmt.Errorf("tools: register %s: %w", spec.Name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[spec.Name]; dup {
		return fmt.Errorf("%w %q", ErrDuplicate, spec.Name)
	}
	r.tools[spec.Name] = &entry{tool: t, spec: spec, timeout: r.timeout(spec), args: schema}
	r.specs = r.buildSpecs()
	return nil
}

// Replace removes the tools named in remove and registers add, at once: a
// caller never sees the set half changed (dynamic tools, such as an MCP
// server's, refresh their catalogue with it). Unknown names in remove are
// ignored. On error (see Register) nothing changes.
func (r *Registry) Replace(remove []string, add ...Tool) error {
	entries := make(map[string]*entry, len(add))
	for _, t := range add {
		spec := t.Spec()
		if !validName(spec.Name) {
			return fmt.Errorf("tools: replace: invalid name %q (want [A-Za-z0-9_-]{1,64})", spec.Name)
		}
		if len(spec.Parameters) == 0 {
			spec.Parameters = emptySchema
		}
		schema, err := parseSchema(spec.Parameters)
		if err != nil {
			return fmt.Errorf("tools: replace %s: %w", spec.Name, err)
		}
		if _, dup := entries[spec.Name]; dup {
			return fmt.Errorf("%w %q", ErrDuplicate, spec.Name)
		}
		entries[spec.Name] = &entry{tool: t, spec: spec, timeout: r.timeout(spec), args: schema}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for name := range entries {
		if _, dup := r.tools[name]; dup && !slices.Contains(remove, name) {
			return fmt.Errorf("%w %q", ErrDuplicate, name)
		}
	}
	for _, name := range remove {
		delete(r.tools, name)
	}
	maps.Copy(r.tools, entries)
	r.specs = r.buildSpecs()
	return nil
}

// timeout picks the configured override, then the tool's own, then the default.
func (r *Registry) timeout(s Spec) time.Duration {
	if d := r.opts.Timeouts[s.Name]; d > 0 {
		return d
	}
	if s.Timeout > 0 {
		return s.Timeout
	}
	return r.opts.DefaultTimeout
}

// buildSpecs returns a new sorted slice, so slices handed out earlier stay
// unchanged. The caller holds r.mu.
func (r *Registry) buildSpecs() []llm.ToolSpec {
	specs := make([]llm.ToolSpec, 0, len(r.tools))
	for _, e := range r.tools {
		specs = append(specs, llm.ToolSpec{
			Name:        e.spec.Name,
			Description: e.spec.Description,
			Parameters:  e.spec.Parameters,
		})
	}
	// sort.Slice: see TestReleaseSortsShareOneShape (internal/archtest).
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	return specs
}

// Specs returns the tools' descriptions for the LLM, sorted by name. The
// slice is shared: callers must not modify it.
func (r *Registry) Specs() []llm.ToolSpec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.specs
}

// ReadOnly reports whether the named tool is read-only, and whether it exists.
func (r *Registry) ReadOnly(name string) (readOnly, known bool) {
	e := r.lookup(name)
	if e == nil {
		return false, false
	}
	return e.spec.ReadOnly, true
}

// Spec returns the named tool's Spec, with Timeout set to the timeout the
// registry enforces.
func (r *Registry) Spec(name string) (Spec, bool) {
	e := r.lookup(name)
	if e == nil {
		return Spec{}, false
	}
	s := e.spec
	s.Timeout = e.timeout
	return s, true
}

func (r *Registry) lookup(name string) *entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.tools[name]
}

// names lists the registered tools, for the unknown-tool message.
func (r *Registry) names() string {
	specs := r.Specs()
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
