package framework

import "github.com/templatedrift/template-drift-controller/internal/testenv"

// Process is a controller run as a child process; internal/testenv owns it
// because the real Cluster API and Metal3 managers of a test control plane
// are run the same way.
type Process = testenv.Process

// StartProcess, StartServing and FreeAddr are internal/testenv's.
var (
	StartProcess = testenv.StartProcess
	StartServing = testenv.StartServing
	FreeAddr     = testenv.FreeAddr
)
