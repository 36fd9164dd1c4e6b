// Package config is gatehouse's typed configuration, loaded from one YAML
// file. Loading is strict: unknown keys, wrong types, bad durations and
// invalid values are errors that name the full key path (*Error). Everything
// absent gets its default; ${VAR} and ${VAR:-default} in values expand from
// the environment so that secrets stay out of the file.
package config

import (
	"time"
)

// Config is the whole bot's configuration. Its yaml keys are part of the
// product's contract.
type Config struct {
	LLM      LLM      `yaml:"llm"`
	Engine   Engine   `yaml:"engine"`
	Gateways Gateways `yaml:"gateways"`
	HITL     HITL     `yaml:"hitl"`
	Policy   Policy   `yaml:"policy"`
	Tools    Tools    `yaml:"tools"`
	Store    Store    `yaml:"store"`
	HTTP     HTTP     `yaml:"http"`
	Log      Log      `yaml:"log"`
	Budget   Budget   `yaml:"budget"`
	// MCP lists the MCP servers whose tools are offered (mcp.servers).
	MCP MCP `yaml:"mcp"`
	// Schedules are prompts run on a cron schedule (see Schedule).
	Schedules []Schedule `yaml:"schedules"`
	// Webhooks are signed deliveries served on http.listen (see Webhook).
	Webhooks []Webhook `yaml:"webhooks"`
	// Attachments bounds and places files received from chat.
	Attachments Attachments `yaml:"attachments"`
	// Skills are folders of skills in the Agent Skills format (see Skills).
	Skills Skills `yaml:"skills"`
	// Profiles give the conversations they match their own providers,
	// model, system prompt, tools, rules, approvers and budget (see
	// Profile); the first that matches wins.
	Profiles []Profile `yaml:"profiles"`
}

// LLM configures the reasoning side.
type LLM struct {
	// Providers are tried in order: the next one on error, timeout, 429 or
	// 5xx. Empty leaves the choice to the caller (the offline demo model).
	Providers []Provider `yaml:"providers"`
	// MaxSteps bounds one turn's depth (tool call → result → …), 1..100.
	MaxSteps int `yaml:"max_steps"`
	// MaxToolCalls is how many tool calls of one model response are run
	// or held, 1..256; the rest are answered "limit reached".
	MaxToolCalls int `yaml:"max_tool_calls"`
	// Timeout bounds one completion request; a provider's own Timeout
	// overrides it.
	Timeout Duration `yaml:"timeout"`
	// History is how many messages are kept per conversation.
	History int `yaml:"history"`
	// SystemPrompt replaces the built-in system prompt when not empty.
	SystemPrompt string `yaml:"system_prompt"`
	// Transcribe turns voice notes and audio into text; unset, they are
	// saved as files only.
	Transcribe Transcribe `yaml:"transcribe"`
}

// Provider is one OpenAI-compatible endpoint.
type Provider struct {
	// Name identifies the provider in logs; defaults to BaseURL's host.
	Name string `yaml:"name"`
	// BaseURL is required, e.g. https://api.openai.com/v1.
	BaseURL string `yaml:"base_url"`
	// APIKey may be empty for servers that need none (Ollama).
	APIKey Secret `yaml:"api_key"`
	// Model defaults to gpt-4o-mini.
	Model  string `yaml:"model"`
	Stream bool   `yaml:"stream"`
	// Timeout bounds one request; defaults to llm.timeout.
	Timeout Duration `yaml:"timeout"`
	// Price is what the provider charges; optional. Each request it
	// answers is recorded at this price (none: it costs 0).
	// budget.daily_usd needs a price on every provider.
	Price *Price `yaml:"price"`
	// Vision says the model accepts image input: images received with a
	// message are sent to it as image parts (attachments.max_images).
	Vision bool `yaml:"vision"`
}

// Price is a provider's price in USD per million tokens.
type Price struct {
	InputPerMTok  float64 `yaml:"input_per_mtok"`
	OutputPerMTok float64 `yaml:"output_per_mtok"`
}

// Budget caps the model's usage per UTC day, counted from the token usage
// the API reports; 0 means unlimited. When a cap is reached, turns are
// refused until the next 00:00 UTC; commands still work.
type Budget struct {
	// ConversationDailyTokens caps one conversation's tokens a day.
	ConversationDailyTokens int `yaml:"conversation_daily_tokens"`
	// DailyTokens caps all conversations' tokens together a day.
	DailyTokens int `yaml:"daily_tokens"`
	// DailyUSD caps all conversations' cost a day, in USD: each request
	// at the price of the provider that answered it (every provider needs
	// a price).
	DailyUSD float64 `yaml:"daily_usd"`
}

// Engine sizes the core loop.
type Engine struct {
	// Concurrency is how many conversations are processed at once.
	Concurrency int `yaml:"concurrency"`
	// Queue is each conversation's queue length; a full queue delays the
	// gateway, it does not drop messages.
	Queue int `yaml:"queue"`
	// MaxMessage is the longest chat message accepted, in bytes; a longer
	// one is refused with a reply, neither stored nor sent to the model.
	MaxMessage int `yaml:"max_message"`
}

// HITL configures approvals.
type HITL struct {
	// TTL is how long an approval stays pending before it expires.
	TTL Duration `yaml:"ttl"`
	// Approvers are the identities ("gateway:id") allowed to approve.
	Approvers []string `yaml:"approvers"`
	// People groups the identities of one person ("gateway:id" each, an
	// identity in one group at most): with allow_self_approval false, no
	// identity of the person who caused a request may approve it. An
	// identity in no group is a person of its own.
	People [][]string `yaml:"people"`
	// Notify are conversation keys ("gateway:chat[:thread]") that also
	// receive every approval request.
	Notify []string `yaml:"notify"`
	// AllowSelfApproval lets an approver approve an action their own
	// message caused.
	AllowSelfApproval bool `yaml:"allow_self_approval"`
	// RemindAfter re-sends a request nobody answered, once, to every
	// conversation that got it, this long after it was raised; 0: never.
	RemindAfter Duration `yaml:"remind_after"`
	// Escalate are the steps taken for a request nobody answered, in
	// order: each asks more people after its delay.
	Escalate []Escalation `yaml:"escalate"`
}

// Escalation is one step of hitl.escalate.
type Escalation struct {
	// After is how long after the request was raised the step is taken;
	// each step's is later than the one before and before hitl.ttl.
	After Duration `yaml:"after"`
	// Approvers may answer the escalated request (/show, approve, deny:
	// that request only, on no allow list); each gets it in a direct
	// message where the gateway can open one.
	Approvers []string `yaml:"approvers"`
	// Notify are conversations that get the escalated request.
	Notify []string `yaml:"notify"`
}

// Tools configures the tool runner.
type Tools struct {
	// Workspace is the directory file and shell tools work in.
	Workspace string `yaml:"workspace"`
	// MaxOutput caps a tool result, in bytes.
	MaxOutput int `yaml:"max_output"`
	// Timeouts overrides the run timeout per tool name.
	Timeouts map[string]Duration `yaml:"timeouts"`
	HTTP     ToolsHTTP           `yaml:"http"`
	// Sandbox confines shell commands: "workspace-write" (Landlock: read
	// the system, write the workspace and a private TMPDIR, no access to
	// other processes), "off", or "auto" (the default, also when empty):
	// workspace-write where the kernel supports it, off with a warning
	// where it does not.
	Sandbox string `yaml:"sandbox"`
	// Checkpoints record the workspace before changing tool calls (/undo).
	Checkpoints Checkpoints `yaml:"checkpoints"`
}

// Checkpoints configures workspace checkpoints and /undo.
type Checkpoints struct {
	// Enabled records a checkpoint before every tool call that is not
	// read-only; default true.
	Enabled bool `yaml:"enabled"`
	// MaxFile is the largest file a checkpoint copies: a workspace with a
	// larger one gets no checkpoint (the call says so). Default 16MiB.
	MaxFile Size `yaml:"max_file"`
	// MaxTotal bounds the blob directory beside the database; the oldest
	// checkpoints are pruned to stay under it. Default 512MiB.
	MaxTotal Size `yaml:"max_total"`
	// Keep is how many checkpoints each conversation keeps. Default 50.
	Keep int `yaml:"keep"`
}

// ToolsHTTP configures the http_get tool.
type ToolsHTTP struct {
	// AllowPrivate permits loopback, private and link-local addresses.
	AllowPrivate bool `yaml:"allow_private"`
	// MaxBytes caps a response body.
	MaxBytes int `yaml:"max_bytes"`
}

// Store configures persistence.
type Store struct {
	// Driver is "sqlite" or "postgres".
	Driver string `yaml:"driver"`
	// DSN is a file path for sqlite, a connection string for postgres. It
	// may hold a password, so it never prints itself.
	DSN Secret `yaml:"dsn"`
	// Retention is how long conversation history is kept; older messages
	// are deleted at start-up and daily. 0 keeps history for ever. The
	// audit log is append-only and never pruned.
	Retention Duration `yaml:"retention"`
	// LeaseTTL is how long a dead instance's work waits before another
	// instance on the same database takes it over: the receiver leases of
	// a store several instances share (app). Default 15s.
	LeaseTTL Duration `yaml:"lease_ttl"`
	// Instance is this instance's name in logs, /status, schedule slots
	// and leases; "" means hostname-pid (app.InstanceName).
	Instance string `yaml:"instance"`
}

// HTTP configures the health and metrics server.
type HTTP struct {
	// Listen is host:port for /healthz /readyz /metrics; empty disables it.
	Listen string `yaml:"listen"`
	// Reload turns on POST /-/reload on Listen (Prometheus's
	// --web.enable-lifecycle); off by default, since anyone who can
	// reach Listen could then reload. SIGHUP reloads either way.
	Reload bool `yaml:"reload"`
}

// Log configures logging.
type Log struct {
	// Level is debug, info, warn or error.
	Level string `yaml:"level"`
	// Format is auto (console on a terminal, JSON otherwise), console or json.
	Format string `yaml:"format"`
}

// Default returns the configuration used for every absent key, with the
// gateway sections of table (app/gatewaytable.Specs) at their
// defaults and its default approvers.
func Default(table []GatewaySpec) *Config {
	var approvers []string
	for _, s := range table {
		approvers = append(approvers, s.DefaultApprovers...)
	}
	return &Config{
		LLM:      LLM{MaxSteps: 10, MaxToolCalls: 16, Timeout: Duration(60 * time.Second), History: 40},
		Engine:   Engine{Concurrency: 8, Queue: 64, MaxMessage: 16 << 10},
		Gateways: newGateways(table),
		HITL: HITL{
			TTL:               Duration(15 * time.Minute),
			Approvers:         approvers,
			AllowSelfApproval: true,
		},
		Tools: Tools{
			Workspace:   "./workspace",
			MaxOutput:   16384,
			HTTP:        ToolsHTTP{MaxBytes: 65536},
			Checkpoints: Checkpoints{Enabled: true, MaxFile: 16 << 20, MaxTotal: 512 << 20, Keep: 50},
		},
		Store: Store{Driver: "sqlite", DSN: "gatehouse.db", Retention: Duration(2160 * time.Hour),
			LeaseTTL: Duration(15 * time.Second)},
		HTTP: HTTP{Listen: "127.0.0.1:9090"},
		Log:  Log{Level: "info", Format: "auto"},

		Attachments: defaultAttachments(),
		Skills:      Skills{MaxListed: defaultMaxListed},
	}
}

// defaultModel is a provider's model when none is set.
const defaultModel = "gpt-4o-mini"

// MCP configures the Model Context Protocol servers whose tools the model
// may call (core/tools/mcp).
type MCP struct {
	Servers []MCPServer `yaml:"servers"`
}

// MCPServer is one MCP server: a stdio child (Command) or a Streamable
// HTTP endpoint (URL), never both. Its tools are offered as
// mcp__<name>__<tool>.
type MCPServer struct {
	// Name is letters, digits and dashes, at most 24 of them.
	Name string `yaml:"name"`
	// Enabled defaults to true; false keeps the entry without starting it.
	Enabled *bool `yaml:"enabled"`
	// Command, Args, Env and Cwd start a stdio server. The child's
	// environment is exactly Env plus PATH and HOME from the bot unless Env
	// sets them. Env values are secrets.
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]Secret `yaml:"env"`
	Cwd     string            `yaml:"cwd"`
	// URL and Headers reach a Streamable HTTP server. Header values are
	// secrets.
	URL     string            `yaml:"url"`
	Headers map[string]Secret `yaml:"headers"`
	// StartTimeout bounds the start and first tool list (default 30s).
	StartTimeout Duration `yaml:"start_timeout"`
	// Timeout bounds one tool call (default 60s).
	Timeout Duration `yaml:"timeout"`
}

// On reports whether the server is to be started.
func (s MCPServer) On() bool { return s.Enabled == nil || *s.Enabled }
