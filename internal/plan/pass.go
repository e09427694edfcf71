package plan

// PassStart is how a pass begins: the options it runs with, the facts the
// object gates look at, and whether it may write.
type PassStart struct {
	Options Options
	Facts   Facts
	// Act is true when the pass may write: mode enabled, not read-only.
	Act bool
}

// StartPass decides how a pass over a HelmRelease begins, from its
// annotations and spec.suspend. A read-only pass (an operator's diff, the
// preview) looks whatever the opt-in and the suspend say: a disabled mode
// is read as warn and a suspended release is looked at; it never writes.
// rollouts is the rollout policy of a release that sets none.
func StartPass(annotations map[string]string, suspended, readOnly bool, rollouts RolloutPolicy) PassStart {
	opts, cfgErr := ParseOptions(annotations, rollouts)
	if readOnly {
		if opts.Mode == ModeDisabled {
			opts.Mode = ModeWarn
		}
		suspended = false
	}
	return PassStart{
		Options: opts,
		Facts:   Facts{Options: opts, ConfigErr: cfgErr, Suspended: suspended},
		Act:     !readOnly && opts.Mode == ModeEnabled,
	}
}
