//go:build !unix

package attach

// oNoFollow is nothing where the system has no O_NOFOLLOW (Windows): the
// saves create with O_EXCL, and os.Root still keeps them inside the
// workspace. gatehouse targets Unix.
const oNoFollow = 0
