-- Browser extension pairings (issue 15): one row per extension the user approved. Only the
-- SHA-256 of the credential is stored (hex); the extension keeps the credential itself. A revoked
-- pairing keeps its row (revoked_at set) so status can say when; its hash never matches again.
CREATE TABLE browser_pairings (
    id                TEXT PRIMARY KEY,
    extension_id      TEXT NOT NULL CHECK (length(extension_id) = 32),
    browser           TEXT NOT NULL,
    browser_version   TEXT NOT NULL,
    extension_version TEXT NOT NULL,
    credential_hash   TEXT NOT NULL UNIQUE CHECK (length(credential_hash) = 64),
    created_at        TEXT NOT NULL,
    last_seen_at      TEXT,
    revoked_at        TEXT
);
CREATE INDEX browser_pairings_extension ON browser_pairings (extension_id);
