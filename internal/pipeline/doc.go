// Package pipeline runs one pass over a HelmRelease, stage by stage, in a
// fixed order: read the release (internal/release) → pair it with the live
// objects (internal/manifest, read through internal/target) → diff
// (internal/diff) → plan (internal/plan) → act (internal/apply.Run). Its
// Result carries the plan's decisions to the reporters (internal/report for
// the HelmRelease, internal/diffreport for the diff command).
//
// To change the order of the stages, or what a stage is given, look here;
// what each stage decides or writes lives in its own package.
package pipeline
