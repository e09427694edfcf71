package plan

// WarmsRelease reports whether the warm-up at start decodes a HelmRelease's
// stored release into the memo: it must be opted in (enabled or warn, with
// valid annotations), and its passes must read Helm storage in the local
// cluster as the controller itself, with no spec.kubeConfig and no service
// account to impersonate. The warm-up lists as the controller, and a memo
// entry serves only the identity that read it: an impersonated pass must
// find nothing its account was not shown to be allowed to read.
func WarmsRelease(annotations map[string]string, remote bool, serviceAccount string) bool {
	opts, err := ParseOptions(annotations)
	return err == nil && opts.Mode != ModeDisabled && !remote && serviceAccount == ""
}
