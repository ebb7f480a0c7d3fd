// Package webapps drives the real bed's applications -- WordPress (a MariaDB
// pod and an apache2/mod_php pod) and Gitea (SQLite) -- through their HTTP
// APIs, and judges from what those APIs read back what a DR step kept.
//
// # Writes and acknowledgements
//
// A client performs one application operation at a time: a WordPress post
// (REST /wp/v2/posts) or media upload (/wp/v2/media), a Gitea commit through
// the contents API (a new file or an update of one) or an issue. Every
// operation carries an idempotency key -- the post's slug, the media's title,
// the commit's message, the title -- unique to the operation, and the
// Journal records it before it is sent: its key, the SHA-256 of each part it
// writes and the volume each part lands on, when it was issued, and how the
// API answered:
//
//   - Acknowledged: a 2xx answer naming the object. The application promised
//     it is durable; losing it is data loss, measured against the recovery
//     point.
//   - Refused: a 4xx answer. It did not happen; finding it later is a
//     violation.
//   - Unknown: no answer (a timeout, a reset connection) or a 5xx. It may or
//     may not have happened, so the driver never retries it under the same
//     key -- the next operation has a new one -- and the read-back classifies
//     it honestly as unacknowledged-present or unacknowledged-lost.
//
// # Read-back and verdict
//
// After a DR step ReadBack lists everything through the same APIs (every
// post, every media item and its file, every commit on main and the file it
// wrote, every issue) into an Observation, and Judge compares it with the
// Journal (Verdict): the acknowledged writes present and intact; the missing
// ones, split by the fail-over's recovery point (missing before it is a
// failure; after it, a loss the loss window counts); content that does not hash to
// what was written (corruption); objects no operation wrote; holes (a write
// missing while a later one to the same volume survived, which no
// crash-consistent copy can show); and an application that does not come
// back at all. Verdict.Workload converts it to the bed's workload.Verdict.
//
// # Images and manifests
//
// The images are built offline by ci/realbed/apps (docs/realbed.md); the
// Kubernetes objects that run them are built here, typed, by WordPressObjects
// and GiteaObjects.
package webapps
