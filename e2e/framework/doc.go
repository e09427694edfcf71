// Package framework holds the e2e suite's building blocks, in the style of
// Cluster API's test framework: control planes with the Flux, Cluster API
// and Metal3 CRDs, the real Flux controllers and the add-on run as
// processes, a chart repository on 127.0.0.1, and the flux CLI (the
// clusterctl move is internal/testenv/move). Everything a test starts, it stops.
package framework
