// Package release reads the Helm release that Flux helm-controller stored for
// a HelmRelease, and checks it against the HelmRelease's status.history.
//
// It owns three things the drift pipeline needs and must not get wrong:
//
//   - Decoding. Releases are read through Helm v4's own storage driver
//     (helm.sh/helm/v4/pkg/storage with driver.NewSecrets), so the package
//     reads exactly what Helm 3 and Helm 4 write, including Helm 4's
//     apply_method. Decode failures are classified (ErrReleaseCorrupt) apart
//     from API failures and missing Secrets (ErrReleaseNotFound).
//   - Memoization. A release Secret holds base64(gzip(JSON)) of the whole
//     chart and manifest, which is costly to decode on every reconcile. A
//     Reader first reads only the Secret's metadata and decodes again only
//     when the Secret's UID or resourceVersion changed.
//   - Identity. Release.Digest is the snapshot digest helm-controller v1.6.4
//     records in status.history, reproduced here (helm-controller's package is
//     internal), so VerifySnapshot can prove that the stored release is the
//     one Flux last observed before the pipeline acts on its manifest. The
//     digest is computed with the algorithm the recorded one names
//     (helm-controller's --snapshot-digest-algo: sha256, sha384 or sha512);
//     a Reader prepares a digester for every algorithm it has met.
//
// The package is read-only: it never creates, updates or deletes a Secret, and
// the Secret client it hands to Helm's driver refuses every write.
package release
