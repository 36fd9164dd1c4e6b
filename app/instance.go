package app

import (
	"fmt"
	"os"
)

// InstanceName is name, or hostname-pid when name is empty: this
// instance's name among those sharing the store.
func InstanceName(name string) string {
	if name != "" {
		return name
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "gatehouse"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}
