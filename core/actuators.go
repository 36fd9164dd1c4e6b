package core

import (
	"fmt"
	"maps"
	"slices"
	"sync"
)

// Actuators is a registry of actuators by name, owned by an Engine.
// Registering a name twice is an error.
type Actuators struct {
	mu sync.RWMutex
	m  map[string]Actuator
}

// Register adds a under name.
func (r *Actuators) Register(name string, a Actuator) error {
	if name == "" || a == nil {
		return fmt.Errorf("actuators: register %q: empty name or nil actuator", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[string]Actuator)
	}
	if _, dup := r.m[name]; dup {
		return fmt.Errorf("actuators: %q registered twice", name)
	}
	r.m[name] = a
	return nil
}

// Get returns the actuator registered under name.
func (r *Actuators) Get(name string) (Actuator, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	a, ok := r.m[name]
	return a, ok
}

// Names returns the registered names, sorted.
func (r *Actuators) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.m))
}
