package workflows

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/internal/release"
)

func testLayout(n int) release.Layout {
	l := release.Layout{Dataset: "d", Version: "v1"}
	for i := range n {
		l.Files = append(l.Files, release.File{Src: fmt.Sprintf("data/part-%05d.parquet", i), Path: fmt.Sprintf("data/test-%05d-of-%05d.parquet", i, n), Rows: 10})
		l.Rows += 10
	}
	return l
}

// TestPublishDataset runs the workflow's three paths: a fresh release
// (every file copied, then finished), a release already there (nothing
// copied) and a copy failing for good (what was staged is aborted, the
// release is never finished, so latest never moves).
func TestPublishDataset(t *testing.T) {
	for _, tc := range []struct {
		name      string
		published bool
		failCopy  int // 1-based index of the copy that fails, 0 for none
		copies    int
		aborted   bool
		finished  bool
	}{
		{name: "fresh", copies: 5, finished: true},
		{name: "already published", published: true, finished: true},
		{name: "corrupt source", failCopy: 3, copies: 3, aborted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			var p *activities.Publish
			l := testLayout(5)
			dest := release.Dest{Dir: "/tmp/rel"}
			env.OnActivity(p.PlanPublish, mock.Anything, activities.PlanPublishInput{Ref: "d@latest", Dest: "/tmp/rel"}).Return(
				activities.PlanPublishResult{Dest: dest, Layout: l, Published: tc.published}, nil)
			var copied []string
			env.OnActivity(p.CopyReleaseFile, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in activities.CopyReleaseFileInput) error {
					copied = append(copied, in.File.Path)
					if in.Dest != dest || in.Dataset != "d" || in.Version != "v1" {
						return fmt.Errorf("copy input %+v", in)
					}
					if len(copied) == tc.failCopy {
						return temporal.NewNonRetryableApplicationError("file data/part-00002.parquet has sha256 x, manifest says y", activities.ErrTypeInvalidInput, nil)
					}
					return nil
				})
			aborted, finished := false, false
			env.OnActivity(p.AbortPublish, mock.Anything, activities.AbortPublishInput{Dest: dest, Layout: l}).Return(
				func(context.Context, activities.AbortPublishInput) error { aborted = true; return nil })
			env.OnActivity(p.FinishPublish, mock.Anything, activities.FinishPublishInput{Dest: dest, Layout: l, Published: tc.published}).Return(
				func(context.Context, activities.FinishPublishInput) (activities.FinishPublishResult, error) {
					finished = true
					return activities.FinishPublishResult{Release: "/tmp/rel/d/vv1", Files: 5, Rows: 50, Reused: tc.published, LatestMoved: true}, nil
				})
			env.ExecuteWorkflow(PublishDataset, PublishDatasetInput{Ref: "d@latest", Dest: "/tmp/rel", MaxParallel: 1})
			require.True(t, env.IsWorkflowCompleted())
			require.Equal(t, tc.copies, len(copied), "copies")
			require.Equal(t, tc.aborted, aborted, "aborted")
			require.Equal(t, tc.finished, finished, "finished")
			if tc.failCopy > 0 {
				require.ErrorContains(t, env.GetWorkflowError(), "data/part-00002.parquet has sha256")
				return
			}
			require.NoError(t, env.GetWorkflowError())
			var res PublishDatasetResult
			require.NoError(t, env.GetWorkflowResult(&res))
			require.Equal(t, PublishDatasetResult{Dataset: "d", Version: "v1", Release: "/tmp/rel/d/vv1", Files: 5, Rows: 50, Reused: tc.published, LatestMoved: true}, res)
			if !tc.published {
				sort.Strings(copied)
				for i, f := range l.Files {
					require.Equal(t, f.Path, copied[i])
				}
			}
		})
	}
}
