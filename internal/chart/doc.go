// Package chart holds the tests of the deployment manifests: the Helm chart in
// charts/template-drift-controller and the kustomize layout in config/. They
// are treated as code: golden renders, values schema, helm lint, RBAC checks
// against the generated config/rbac/role.yaml, and a dry-run of every object
// against a real API server. The package has no non-test code.
package chart
