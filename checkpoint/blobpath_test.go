package checkpoint

// blobPath is where the blob directory keeps the content with the hex
// SHA-256 sum (tests of the file store).
func (m *Manager) blobPath(sum string) string {
	return m.blobs.(*fileBlobs).path(sum)
}
