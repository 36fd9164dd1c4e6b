// Package core holds gatehouse's vocabulary and its loop: signals come in from
// gateways, the Engine runs Perceive → Reason → Act on each conversation in
// order, gates decide what the LLM proposed, and actuators carry it out.
//
// core knows no gateway and no approval broker: both plug in through the small
// interfaces declared here (Actuator, Holder, CommandHandler, Dispatcher);
// gateways deliver signals through gateways.Inbox, which the Engine
// implements.
package core
