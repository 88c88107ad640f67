// Package deploy holds no code. Its tests validate what this directory
// ships, without a container engine or a cluster (docs/DEPLOY.md, "What was
// validated here"): the Helm chart rendered by `helm template` and every
// object decoded strictly into the Kubernetes API types, the compose file
// loaded by the compose specification's Go loader, the Dockerfile's stages
// and packages, and the Grafana dashboard's metric names. `make
// validate-deploy` runs them; `make test` too.
package deploy
