package plan_test

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

func TestDriftDigest(t *testing.T) {
	url := diff.Change{Path: "/spec/template/spec/image/url", Op: diff.OpReplace, Before: "http://10.0.0.1/img", After: "http://10.0.0.2/img"}
	prefix := diff.Change{Path: "/spec/networkData/networks/ipv4/0/routes/0/prefix", Op: diff.OpAdd, After: int64(24)}
	old := diff.Change{Path: "/spec/old", Op: diff.OpRemove, Before: "x"}
	with := func(ch diff.Change, f func(*diff.Change)) diff.Change { f(&ch); return ch }
	base := plan.DriftDigest([]diff.Change{url, prefix, old})

	cases := []struct {
		name    string        // what the case proves
		changes []diff.Change // compared with base (url, prefix, old)
		same    bool          // the digest must equal base's
	}{{
		name:    "order does not matter",
		changes: []diff.Change{old, url, prefix},
		same:    true,
	}, {
		name:    "numbers by value: a JSON 24.0 is a YAML 24",
		changes: []diff.Change{url, with(prefix, func(c *diff.Change) { c.After = 24.0 }), old},
		same:    true,
	}, {
		name:    "a value of another type",
		changes: []diff.Change{url, with(prefix, func(c *diff.Change) { c.After = map[string]any{"a": int64(24)} }), old},
	}, {
		name:    "another desired value",
		changes: []diff.Change{with(url, func(c *diff.Change) { c.After = "http://10.0.0.3/img" }), prefix, old},
	}, {
		name:    "another live value: drift again to somewhere else",
		changes: []diff.Change{with(url, func(c *diff.Change) { c.Before = "http://10.0.0.9/img" }), prefix, old},
	}, {
		name:    "another path",
		changes: []diff.Change{with(url, func(c *diff.Change) { c.Path = "/spec/template/spec/image/checksum" }), prefix, old},
	}, {
		name:    "another op",
		changes: []diff.Change{url, with(prefix, func(c *diff.Change) { c.Op = diff.OpReplace }), old},
	}, {
		name:    "one change fewer",
		changes: []diff.Change{url, prefix},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := plan.DriftDigest(tc.changes)
			g.Expect(got).To(MatchRegexp(`^[0-9a-f]{12}$`))
			if tc.same {
				g.Expect(got).To(Equal(base))
			} else {
				g.Expect(got).NotTo(Equal(base))
			}
		})
	}

	g := NewWithT(t)
	g.Expect(plan.DriftDigest(nil)).To(BeEmpty(), "no changes, no digest")
	m1 := with(prefix, func(c *diff.Change) { c.After = map[string]any{"a": int64(1), "b": "x"} })
	m2 := with(prefix, func(c *diff.Change) { c.After = map[string]any{"b": "x", "a": 1.0} })
	g.Expect(plan.DriftDigest([]diff.Change{m1})).To(Equal(plan.DriftDigest([]diff.Change{m2})), "maps are canonical")
}

func TestDecideTemplateLoopGuard(t *testing.T) {
	drift := []diff.Change{{Path: "/spec/template/spec/image/url", Op: diff.OpReplace, Before: "http://10.0.0.1/img", After: "http://10.0.0.2/img"}}
	otherDrift := []diff.Change{{Path: "/spec/template/spec/image/url", Op: diff.OpReplace, Before: "http://10.0.0.1/img", After: "http://10.0.0.7/img"}}
	const release = "fleet/cluster.v2"
	const failure = `corrected %s once for fleet/cluster.v2, but the server does not keep the value (it, or another writer, sets it back): ` +
		`/spec/template/spec/image/url: "http://10.0.0.1/img" → "http://10.0.0.2/img"; ` +
		`to have it corrected once more, remove annotation templatedrift.io/corrected-drift from the template`

	cases := []struct {
		name string // what the case proves
		// record is the live template's record: source release, correction, digest.
		source, correction, digest string
		// requested and dry are the strategy annotation and the in-place dry-run answer.
		requested plan.Strategy
		dry       plan.DryRun
		want      plan.TemplatePlan // without ID, Changes, Desired and Live
	}{{
		name:   "the same difference again after an in-place correction: failed, no writes",
		source: release, correction: "in-place", digest: plan.DriftDigest(drift),
		requested: plan.StrategyAuto, dry: plan.DryRunAccepted,
		want: plan.TemplatePlan{Outcome: plan.OutcomeFailed, Message: fmt.Sprintf(failure, "in place")},
	}, {
		name:   "the same difference again after a recreate: failed, no writes, whatever the dry-run says",
		source: release, correction: "recreate", digest: plan.DriftDigest(drift),
		requested: plan.StrategyAuto, dry: plan.DryRunLocked,
		want: plan.TemplatePlan{Outcome: plan.OutcomeFailed, Message: fmt.Sprintf(failure, "by recreate")},
	}, {
		name:   "the same difference again, rotate requested since: still failed",
		source: release, correction: "in-place", digest: plan.DriftDigest(drift),
		requested: plan.StrategyRotate,
		want:      plan.TemplatePlan{Outcome: plan.OutcomeFailed, Message: fmt.Sprintf(failure, "in place")},
	}, {
		name:   "a different difference: corrected, with the new digest",
		source: release, correction: "in-place", digest: plan.DriftDigest(otherDrift),
		requested: plan.StrategyAuto, dry: plan.DryRunAccepted,
		want: plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyInPlace,
			Writes: []plan.Write{plan.WritePatch}, DriftDigest: plan.DriftDigest(drift)},
	}, {
		name:   "the same difference recorded for another release: corrected",
		source: "fleet/cluster.v1", correction: "in-place", digest: plan.DriftDigest(drift),
		requested: plan.StrategyAuto, dry: plan.DryRunAccepted,
		want: plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyInPlace,
			Writes: []plan.Write{plan.WritePatch}, DriftDigest: plan.DriftDigest(drift)},
	}, {
		name:   "a record without a digest: corrected",
		source: release, correction: "recreate",
		requested: plan.StrategyRecreate,
		want: plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRecreate,
			Writes: []plan.Write{plan.WriteDelete, plan.WriteCreate}, DriftDigest: plan.DriftDigest(drift)},
	}, {
		name:   "a digest without a correction record: corrected",
		source: release, digest: plan.DriftDigest(drift),
		requested: plan.StrategyAuto, dry: plan.DryRunAccepted,
		want: plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyInPlace,
			Writes: []plan.Write{plan.WritePatch}, DriftDigest: plan.DriftDigest(drift)},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ann := map[string]string{}
			for k, v := range map[string]string{api.SourceReleaseAnnotation: tc.source, api.CorrectionAnnotation: tc.correction, api.CorrectedDriftAnnotation: tc.digest} {
				if v != "" {
					ann[k] = v
				}
			}
			live := fromYAML(t, m3mtLive)
			live.SetAnnotations(ann)
			in := plan.TemplateInput{Desired: fromYAML(t, m3mtDesired), Live: live, Changes: drift,
				ReplacementName: "workers-5f1c2a9b0d", Requested: tc.requested, DryRun: tc.dry, Release: release}

			got := plan.DecideTemplate(in)
			again := plan.DecideTemplate(in)
			g.Expect(again).To(Equal(got), "every pass decides the same, message included")
			g.Expect(got.Changes).To(Equal(drift))
			got.ID, got.Changes, got.Desired, got.Live = manifest.ID{}, nil, nil, nil
			g.Expect(got).To(Equal(tc.want))
		})
	}
}
