package deploy

import "github.com/compose-spec/compose-go/v2/types"

type composeProj struct{ *types.Project }
