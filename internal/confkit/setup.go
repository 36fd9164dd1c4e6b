package confkit

// Setup is what `bot init` asks about a gateway and writes for it. A
// gateway without one (the terminal's) is offered by name only.
type Setup struct {
	// Title names the platform in questions ("Slack").
	Title string
	// Secrets are the credentials asked for, in order. Each is written to
	// .env as Env=value and in the section as Key: ${Env}, the variable
	// the shipped configuration names; with -yes it is read from Env.
	Secrets []SetupSecret
	// URLKey is the section's key of the platform's API URL ("api_url"),
	// which `bot init -api-url NAME=URL` sets (a self-hosted server, a
	// proxy, a test's fake).
	URLKey string
}

// SetupSecret is one credential `bot init` asks for.
type SetupSecret struct {
	// Key is the section's key ("bot_token").
	Key string
	// Env is the environment variable ("SLACK_BOT_TOKEN").
	Env string
	// Prompt says what to enter and where to find it.
	Prompt string
}
