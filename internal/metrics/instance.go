package metrics

import "strconv"

// SetInstance registers gatehouse_instance_info{instance_name, version,
// shared} = 1: which gatehouse instance this scrape target is. Every
// series of one scrape comes from one process, so the other series carry
// no instance label of their own (the scrape already tells them apart by
// its target label, "instance", which a label of that name here would
// collide with); a query joins them to the name:
//
//	gatehouse_replies_total * on(instance) group_left(instance_name) gatehouse_instance_info
//
// Call it once.
func (r *Registry) SetInstance(name, version string, shared bool) {
	if r == nil {
		return
	}
	if version == "" {
		version = "devel"
	}
	r.addGauge(InstanceInfo, labelSet("instance_name", name, "version", version, "shared", strconv.FormatBool(shared)),
		func() float64 { return 1 })
}
