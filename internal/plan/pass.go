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
func StartPass(annotations map[string]string, suspended, readOnly bool) PassStart {
	opts, cfgErr := ParseOptions(annotations)
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

// NeedsFreshFacts reports whether a pass must decide again from live reads
// before it acts: its decisions delete something (a recreate, or the
// clean-up of a replacement) and were made from informers, which may lag a
// new user. "Delete only when unused" is never decided on a cache.
func NeedsFreshFacts(cached bool, d Decisions) bool {
	return cached && d.Act && d.Deletes()
}

// Deletes reports whether the decisions delete anything: a recreate, or
// the clean-up of a replacement.
func (d Decisions) Deletes() bool {
	if len(d.Prune) > 0 {
		return true
	}
	for _, t := range d.Templates {
		if t.Needs(WriteDelete) {
			return true
		}
	}
	return false
}
