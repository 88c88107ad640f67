// Package deps pins the project's libraries in go.mod while the packages that
// use them are being written. It is removed once every library is imported by
// real code.
package deps

import (
	_ "github.com/apache/arrow-go/v18/parquet/pqarrow"
	_ "github.com/parquet-go/parquet-go"
	_ "github.com/sashabaranov/go-openai"
	_ "github.com/spf13/cobra"
	_ "github.com/stretchr/testify/require"
	_ "go.temporal.io/sdk/client"
	_ "go.temporal.io/sdk/testsuite"
	_ "go.temporal.io/sdk/worker"
	_ "golang.org/x/time/rate"
	_ "gopkg.in/yaml.v3"
)
