package config

import (
	"slices"

	"github.com/gatehouse-bot/gatehouse/internal/confkit"
)

// GatewaySpec is one entry of the gateway table Parse is given: a gateway's
// name and its section's defaults. The table itself lives in
// app/gatewaytable, which imports every gateway package; this package
// imports none, so it is handed the table instead.
type GatewaySpec = confkit.Spec

// Gateways are the gateway sections, gateways.<name>: one per entry of the
// gateway table, in the table's order, each defined by its gateway's
// package. A gateway is enabled when its credentials are set; "enabled:
// false" turns it off regardless, and "enabled: true" without credentials
// is an error.
type Gateways struct {
	names    []string
	sections []confkit.Section
}

// newGateways returns every table entry's section with its defaults.
func newGateways(table []GatewaySpec) Gateways {
	g := Gateways{names: make([]string, len(table)), sections: make([]confkit.Section, len(table))}
	for i, s := range table {
		g.names[i], g.sections[i] = s.Name, s.New()
	}
	return g
}

// Names returns the gateways' names in table order.
func (g Gateways) Names() []string { return slices.Clone(g.names) }

// Section returns the named gateway's section, or nil when the table has
// no such gateway.
func (g Gateways) Section(name string) confkit.Section {
	if i := slices.Index(g.names, name); i >= 0 {
		return g.sections[i]
	}
	return nil
}

// Enabled reports whether the named gateway is enabled.
func (g Gateways) Enabled(name string) bool {
	s := g.Section(name)
	return s != nil && s.Enabled()
}

// MarshalYAML renders the sections as a mapping by name; secrets render
// as "<secret>".
func (g Gateways) MarshalYAML() (any, error) {
	m := make(map[string]confkit.Section, len(g.names))
	for i, name := range g.names {
		m[name] = g.sections[i]
	}
	return m, nil
}

// check validates every section under gateways.<name>.
func (g Gateways) check(ch *checker, httpListen string) {
	for i, name := range g.names {
		g.sections[i].Check(ch.kit.Under("gateways."+name), confkit.Globals{HTTPListen: httpListen})
	}
}
