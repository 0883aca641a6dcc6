// Package learning holds no code: it states the order of synaxi's learning
// loop, which deps_test.go enforces on every package of this module.
//
// The loop runs read → extract → screen → store → review → publish. Its
// imports point the same way: a stage imports only the stages before it,
// the profile's vocabulary and store (store: Observation, Entry and the
// versioned file, which every stage speaks), and the support packages
// (chatapi, queue). The adapters (hook, cli, mcptool, cmd/…) sit above
// every stage and import what they need. Nothing below imports an adapter.
package learning
