package storetest

import "testing"

// contractStep is one named step of a contract whose steps share one
// store and run in order, each from the state the steps before it left.
type contractStep struct {
	name string
	run  func(t *testing.T)
}

// runSteps runs steps in order, each as a subtest of t. A step that
// stops early (t.Fatal) ends the contract there, since the steps after
// it would start from a state it did not reach; a step that only
// reports errors (t.Error) lets the next ones run.
func runSteps(t *testing.T, steps ...contractStep) {
	t.Helper()
	for _, s := range steps {
		finished := false
		t.Run(s.name, func(t *testing.T) {
			s.run(t)
			finished = true
		})
		if !finished {
			return
		}
	}
}
