//go:build !unix

package checkpoint

// oNoFollow is nothing where the system has no O_NOFOLLOW (Windows):
// os.Root still keeps every open inside the workspace. gatehouse targets
// Unix.
const oNoFollow = 0
