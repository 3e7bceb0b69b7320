/// Every constant of the on-disk format, in one place. Docs/FORMAT.md explains each one;
/// change neither without the other (and `formatVersion` when old files can no longer be read).
///
/// All integers on disk are little-endian.
public enum CaskFormat {
  /// The format version this library writes for new stores: 5, an authenticated header and
  /// segments chained to one another (`authenticatedVersion`), over version 3 records and
  /// version 4 key epochs. Stores of versions 2, 3 and 4 are still read and written as they
  /// are; `CaskStore.upgrade` rewrites them as version 5. Version 1 was a pre-release layout
  /// (values not bound to their keys, no batch-start flag): stores of that version are
  /// refused with `CaskError.unsupportedVersion` rather than misread.
  public static let formatVersion: UInt16 = 5
  /// The oldest format version this library reads (and writes, for stores of that version).
  public static let oldestReadableVersion: UInt16 = 2
  /// The first version whose records are bound to their place and whose messages are tagged.
  public static let boundRecordsVersion: UInt16 = 3
  /// The header version of a store with **key epochs** (Docs/FORMAT.md, section 3a): version 3
  /// records, segments and hints, plus a key ring in the header, an epoch in every segment
  /// header and the epochs in the manifest. A version 3 store gets it at its first password or
  /// key change; a reader that knows only versions 2 and 3 refuses it (`unsupportedVersion`)
  /// instead of opening a store whose older segments it could not decrypt.
  public static let keyEpochsVersion: UInt16 = 4
  /// The header version of a store whose header is authenticated under its data key and whose
  /// segments carry a sealed link to the segment before them (Docs/FORMAT.md, sections 3b and
  /// 5.1): version 3 records and version 4 key epochs, plus a store identity. A reader that
  /// knows only versions 2 to 4 refuses it (`unsupportedVersion`).
  public static let authenticatedVersion: UInt16 = 5

  // MARK: Files of a store directory

  /// The store header: magic, version, wrapped data key.
  public static let headerFileName = "CASK"
  /// The advisory lock file.
  public static let lockFileName = "LOCK"
  /// Segment files: `<file id, 8 hex digits>.seg`.
  public static let segmentExtension = "seg"
  /// Hint files: `<file id, 8 hex digits>.hint`, one per sealed segment.
  public static let hintExtension = "hint"
  /// The manifest of a version 3 store: its segments, lengths and last sequence, sealed.
  public static let manifestFileName = "MANIFEST"
  /// Suffix of a file being written; removed at open if left behind by a crash.
  public static let temporarySuffix = ".tmp"
  /// What a resumed segment's hint is renamed to before the segment grows (`NNNNNNNN.hint`
  /// becomes `NNNNNNNN.hint.stale.tmp`), then removed off the writer's thread; a `.tmp` name,
  /// so that a writable open removes one a crash left behind.
  public static let staleHintSuffix = ".stale" + temporarySuffix

  // MARK: Header file

  /// The header's first 8 bytes: "CIPHCASK".
  public static let headerMagic: [UInt8] = Array("CIPHCASK".utf8)
  /// Flag bit: the data key is wrapped with a password (RNCryptor password message);
  /// otherwise with caller-supplied keys (key message).
  public static let headerFlagPasswordWrapped: UInt16 = 1
  /// Flag bit, only with `headerFlagPasswordWrapped`: the password's keys come from scrypt, whose
  /// parameters and salt open the wrapped-key field, followed by a key message (no PBKDF2).
  public static let headerFlagScrypt: UInt16 = 2
  /// Flag bit, set exactly in a version 4 header: a key ring (its length, then a key message
  /// under the current data key) follows the wrapped-key field, before the CRC.
  public static let headerFlagKeyRing: UInt16 = 4
  /// Flag bit, set exactly in a version 5 header: the store identity and the header's MAC
  /// follow the key ring, before the CRC.
  public static let headerFlagAuthenticated: UInt16 = 8
  /// A store's identity: random bytes a version 5 header, manifest and segment name.
  public static let storeIdentityLength = 16
  /// The HMAC-SHA256 that ends a version 5 header and a version 5 segment header.
  public static let authenticatorLength = 32
  /// A version 5 wrapped key's plaintext is the data key, then the header's version (2 bytes),
  /// so that a version field changed back is told apart from a genuine older header.
  public static let wrappedVersionLength = 2
  /// The key ring's plaintext before its entries: tag(1) + flags(1) + reserved(2) + current
  /// epoch(4) + older count(4) + pinned epoch(4) + pinned manifest digest(32).
  public static let keyRingFixedLength = 48
  /// Where the key ring's current epoch (4) starts in its plaintext.
  public static let keyRingCurrentEpochOffset = 4
  /// Where the key ring's count of older epochs (4) starts in its plaintext.
  public static let keyRingOlderCountOffset = 8
  /// Where the key ring's pinned manifest epoch (4) starts in its plaintext.
  public static let keyRingPinnedEpochOffset = 12
  /// Where the key ring's pinned manifest digest (32) starts in its plaintext.
  public static let keyRingPinnedDigestOffset = 16
  /// One older epoch in the key ring: epoch(4) + data key(64).
  public static let keyRingEntryLength = 68
  /// Key ring flag bit: the pinned manifest fields are set (a manifest sealed under an older
  /// epoch's key that open accepts, written just before the header that started this epoch).
  public static let keyRingFlagPinnedManifest: UInt8 = 1
  /// The highest key epoch; a password change past it is refused (make a rekeyed copy).
  public static let maximumKeyEpoch: UInt32 = UInt32.max - 1
  /// scrypt's fields in front of the key message: N(8) + r(4) + p(4) + salt(16).
  public static let headerScryptFieldsLength = 32
  /// Length of the scrypt salt in the header.
  public static let headerScryptSaltLength = 16
  /// magic(8) + version(2) + flags(2) + wrapped length(4).
  public static let headerFixedLength = 16
  /// Where the header's version (2) starts.
  public static let headerVersionOffset = 8
  /// Where the header's flags (2) start.
  public static let headerFlagsOffset = 10
  /// Where the header's wrapped key length (4) starts.
  public static let headerWrappedLengthOffset = 12
  /// Length of the unwrapped data key: encryption key, HMAC key (32 bytes each).
  public static let dataKeyLength = 64
  /// Length of each half of the data key.
  public static let dataKeyPartLength = 32

  // MARK: Segment files

  /// A segment's first 8 bytes: "CCSEGMNT".
  public static let segmentMagic: [UInt8] = Array("CCSEGMNT".utf8)
  /// magic(8) + version(2) + reserved(2) + file id(4) + order base(4) + order sub(4) + key epoch(4) + CRC(4).
  public static let segmentHeaderLength = 32
  /// Offset of the segment's key epoch (reserved and 0 before key epochs).
  public static let segmentEpochOffset = 24
  /// The segment header's CRC covers the bytes before it.
  public static let segmentHeaderChecksummedLength = 28
  /// A version 5 segment's link, after the 32 bytes above: store identity(16) + previous id(4)
  /// + previous order base(4) + previous order sub(4) + link flags(4) + previous length(8) +
  /// previous tail(32) + MAC(32). Its records start after it.
  public static let segmentLinkLength = 104
  /// Link flag bit: the segment has a predecessor (the fields naming it are set).
  public static let segmentLinkFlagPrevious: UInt32 = 1
  /// How many bytes of the previous segment's end the link names: its last 32 bytes.
  public static let segmentTailLength = 32

  // MARK: Records

  /// crc(4) + type(1) + flags(1) + reserved(2) + sequence(8) + key length(4) + value length(4).
  public static let recordHeaderLength = 24
  /// Record type of a put.
  public static let recordTypePut: UInt8 = 1
  /// Record type of a delete (tombstone); its value length is 0.
  public static let recordTypeDelete: UInt8 = 2
  /// Record flag: the last record of its batch (the commit marker).
  public static let recordFlagBatchEnd: UInt8 = 1
  /// Record flag: the first record of its batch. With the end flag, a scan that skipped
  /// damage knows where the next whole batch begins.
  public static let recordFlagBatchStart: UInt8 = 2
  /// Offset of the flags byte in a record.
  public static let recordFlagsOffset = 5
  /// Offset of the key message's length (4 bytes, little-endian) in a record.
  public static let recordKeyLengthOffset = 16
  /// Offset of the type byte in a record.
  public static let recordTypeOffset = 4
  /// Offset of the reserved field (2 bytes, must be 0) in a record.
  public static let recordReservedOffset = 6
  /// Offset of the sequence number (8 bytes, little-endian) in a record.
  public static let recordSequenceOffset = 8
  /// Offset of the value message's length (4 bytes, little-endian) in a record.
  public static let recordValueLengthOffset = 20

  // MARK: Sealed plaintexts (version 3)

  /// First plaintext byte of a key message: what follows is the record's binding, then the key.
  public static let messageTagKey: UInt8 = 0x4B
  /// First plaintext byte of a version 5 tombstone's key message: its short binding
  /// (`tombstoneBindingLength`), then the key. Also what names the record a delete.
  public static let messageTagTombstone: UInt8 = 0x44
  /// First plaintext byte of a version 5 put's key message that carries attached keys: the
  /// long binding (`keyBindingLength`), the key's length (`attachedKeyLengthWidth`), the key,
  /// then the attachment section (Docs/FORMAT.md, "Version 5: attached keys").
  public static let messageTagAttached: UInt8 = 0x41
  /// Width of the key's length after an attaching binding, and of every length and count of
  /// the attachment section.
  public static let attachedKeyLengthWidth = 2
  /// Offsets of a long binding's fields in a key message's plaintext.
  public static let bindingTypeOffset = 1
  public static let bindingFlagsOffset = 2
  public static let bindingReservedOffset = 3
  public static let bindingSegmentOffset = 4
  public static let bindingOffsetOffset = 8
  public static let bindingSequenceOffset = 16
  public static let bindingDigestOffset = 24
  /// Offsets of a short (version 5 tombstone) binding's fields.
  public static let tombstoneBindingFlagsOffset = 1
  public static let tombstoneBindingSegmentOffset = 2
  public static let tombstoneBindingOffsetOffset = 6
  public static let tombstoneBindingSequenceOffset = 14
  /// First plaintext byte of a value message: key length, key, value follow.
  public static let messageTagValue: UInt8 = 0x56
  /// First plaintext byte of a hint file's message: the hint payload follows.
  public static let messageTagHint: UInt8 = 0x48
  /// First plaintext byte of the manifest's message.
  public static let messageTagManifest: UInt8 = 0x4D
  /// First plaintext byte of an integrity token's message.
  public static let messageTagToken: UInt8 = 0x54
  /// An integrity token's plaintext: tag(1) + reserved(1) + manifest generation(8) + last
  /// sequence number(8).
  public static let tokenPlaintextLength = 18
  /// Where the token's manifest generation starts in its plaintext.
  public static let tokenGenerationOffset = 2
  /// Where the token's last sequence number starts in its plaintext.
  public static let tokenSequenceOffset = 10
  /// First plaintext byte of the header's key ring.
  public static let messageTagKeyRing: UInt8 = 0x52
  /// The manifest's first 8 bytes: "CCMANIFS".
  public static let manifestMagic: [UInt8] = Array("CCMANIFS".utf8)
  /// A manifest's segment entry: id(4) + order base(4) + order sub(4) + flags(4) + length(8).
  public static let manifestEntryLength = 24
  /// A manifest's segment entry with key epochs (version 4 on): the above, then the epoch(4).
  public static let manifestEpochEntryLength = 28
  /// A retired id in a manifest, and a pending one without key epochs.
  public static let manifestIDLength = 4
  /// A pending id with key epochs: the id, then its epoch(4).
  public static let manifestEpochPendingLength = 8
  /// Length of the tag in front of every sealed plaintext.
  public static let messageTagLength = 1
  /// A key message's plaintext before the key: tag(1) + record type(1) + flags(1) +
  /// reserved(1) + segment id(4) + record offset(8) + sequence(8) + value digest(32).
  public static let keyBindingLength = 56
  /// A version 5 tombstone's key message's plaintext before the key: tag 'D'(1) + flags(1) +
  /// segment id(4) + record offset(8) + sequence(8). The tag names the type and a delete has
  /// no value to digest, so neither takes room (Docs/FORMAT.md, "Version 5: short tombstones").
  public static let tombstoneBindingLength = 22
  /// The value digest in a key message: the value message's last 32 bytes (its HMAC-SHA256);
  /// 32 zero bytes for a delete.
  public static let valueDigestLength = 32

  // MARK: Hint files

  /// A hint file's first 8 bytes: "CCHINTS1".
  public static let hintMagic: [UInt8] = Array("CCHINTS1".utf8)
  /// version(2) + reserved(2) + segment id(4) + segment length(8) + max sequence(8) + count(4).
  public static let hintPayloadHeaderLength = 28
  /// Type of a hint entry of a put whose record carries attached keys: the entry is followed
  /// by the attachment section's length (4 bytes) and the section (version 5 only).
  public static let hintEntryTypeAttached: UInt8 = 3
  /// Width of the section length after an attaching hint entry.
  public static let hintAttachedLengthWidth = 4
  /// type(1) + reserved(1) + key length(2) + record offset(4) + record length(4), before the key.
  public static let hintEntryFixedLength = 12
  /// A hint file with a group section (Docs/FORMAT.md, "Hint files"): "CCHINTS2". Written from
  /// the Unreleased version on; "CCHINTS1" hints, without it, are still read.
  public static let hintMagicGrouped: [UInt8] = Array("CCHINTS2".utf8)
  /// A grouped hint whose attachment sections name their groups by number in a table of names
  /// after the group section (Docs/FORMAT.md, "Hint files"): "CCHINTS3". Written for a segment
  /// whose records carry attached keys; "CCHINTS2" and "CCHINTS1" hints are still read.
  public static let hintMagicNamed: [UInt8] = Array("CCHINTS3".utf8)
  /// A grouped hint's header: the 28 bytes above, then ungrouped puts(4) + groups listed(2).
  public static let hintGroupedHeaderLength = 34
  /// One group of a grouped hint's group section, before its name: puts(4) + name length(2).
  public static let hintGroupFixedLength = 6
  /// A grouped hint's payload (tag included) ends its group section within this many bytes,
  /// so that open reads every hint's sizes from its first ciphertext blocks alone.
  public static let hintSizingLength = 4096

  // MARK: Checkpoint

  /// The checkpoint of a store with a manifest (Docs/FORMAT.md, section 18): the key directory
  /// as of one place in the log, so that open replays only what was written after it.
  public static let checkpointFileName = "CHECKPOINT"
  /// A checkpoint's first 8 bytes: "CCCHKPT1".
  public static let checkpointMagic: [UInt8] = Array("CCCHKPT1".utf8)
  /// The layout of the checkpoint's root and pages; a reader ignores a checkpoint of another
  /// (2: the sorted keys of reserved groups; 3: sparse slot pages and prefix-compressed
  /// chunks; 4: a sorted group's chunks made again from its sorted pages; 5: slot pages of
  /// `checkpointSlotsPerPage` = 256 slots; 6: pages bound to their file by a nonce in the root
  /// and in every page instead of a digest of each page in the root, section 18).
  public static let checkpointLayoutVersion: UInt16 = 6
  /// magic(8) + root message length(4), before the root message.
  public static let checkpointHeadLength = 12
  /// Where the root message's length starts in a checkpoint's head.
  public static let checkpointRootLengthOffset = 8
  /// First plaintext byte of a checkpoint's root message.
  public static let messageTagCheckpointRoot: UInt8 = 0x43
  /// First plaintext byte of a checkpoint page's message.
  public static let messageTagCheckpointPage: UInt8 = 0x50
  /// The root's flags (byte 1): no record of the log the checkpoint covers carries attached
  /// keys, so open knows that no write or replay has an old record's section to read. A
  /// reader of an older CipherCask, which takes byte 1 as reserved, ignores such a checkpoint.
  public static let checkpointFlagNoAttachedKeys: UInt8 = 0x01
  /// The root's plaintext before its lists: tag(1) + flags(1) + layout version(2) + record
  /// version(2) + reserved(2) + key epoch(4) + store identity(32) + manifest generation(8) +
  /// covered segment(4) + covered offset(8) + last sequence(8) + keys(8) + hash key(16) +
  /// tombstones(4) + segment count(4) + table count(4) + page count(4) + file nonce(16).
  public static let checkpointRootFixedLength = 128
  /// The random bytes a checkpoint file's root and each of its pages carry, new for every file
  /// written: a page is this file's only if its nonce is the root's.
  public static let checkpointNonceLength = 16
  /// One segment of the root: id(4) + order base(4) + order sub(4) + key epoch(4) + length(8) +
  /// total bytes(8) + dead bytes(8).
  public static let checkpointSegmentLength = 40
  /// One table of the root, before its name and chunk lengths: capacity(8) + keys(8) + long-key
  /// bytes live(8) + dead(8) + bytes used in the last chunk(4) + chunk count(4) + name length(2).
  public static let checkpointTableFixedLength = 42
  /// One page of the root: its message's length(4).
  public static let checkpointPageRefLength = 4
  /// A page's plaintext before its contents: tag(1) + kind(1) + reserved(2) + page number(4) +
  /// table(4) + count(4) + the file's nonce(16).
  public static let checkpointPageHeadLength = 32
  /// Page kind: `count` slots of a table: a bitmap of the used ones, then each used slot's
  /// 32 bytes as the table holds them (a long key's position the one the file's chunks give).
  public static let checkpointPageSlots: UInt8 = 1
  /// Page kind: one chunk of a table's long keys, `count` bytes once decoded, its keys in byte
  /// order and prefix-compressed as a sorted page's (`checkpointSortedKeyHeadLength`).
  public static let checkpointPageChunk: UInt8 = 2
  /// Page kind: `count` tombstones of the covered segment, laid out as hint entries.
  public static let checkpointPageTombstones: UInt8 = 3
  /// Page kind: `count` keys of a sorted group, in byte order, prefix-compressed.
  public static let checkpointPageSorted: UInt8 = 4
  /// A sorted group's page in the root: keys(4) + first key's length(2), then the first key.
  public static let checkpointSortedPageRefLength = 6
  /// A sorted group in the root: table(4) + page count(4).
  public static let checkpointSortedGroupLength = 8
  /// A key of a sorted page: bytes shared with the key before in the page(2) + length of the
  /// rest(2), then the rest.
  public static let checkpointSortedKeyHeadLength = 4
  /// A sorted page is closed once its keys reach this many plaintext bytes.
  public static let checkpointSortedPageTarget = 32 << 10
  /// Default bytes of decoded sorted pages kept in memory (`CaskStore.Options.Checkpoints`).
  public static let defaultSortedPageCacheBytes = 8 << 20
  /// A slot of a table, in memory and in a slots page (Docs/FORMAT.md, section 18).
  public static let checkpointSlotLength = 32
  /// Offsets in a slot: a long key's position in its chunks (8) and length (4); the record's
  /// segment id, offset and length (4 each); the meta word (4). A short key fills 0 ..< 16.
  public static let slotLongKeyPositionOffset = 0
  public static let slotLongKeyLengthOffset = 8
  public static let slotSegmentOffset = 16
  public static let slotOffsetOffset = 20
  public static let slotLengthOffset = 24
  public static let slotMetaOffset = 28
  /// Slots in a full slots page (8 KiB of them): the first lookup after an open reads,
  /// authenticates, decrypts and checks one such page, so its size is a fixed cost of every
  /// open; the root lists each page's 4-byte length (Docs/FORMAT.md, section 13).
  public static let checkpointSlotsPerPage = 256
  /// A tombstones page is closed once its entries reach this many plaintext bytes.
  public static let checkpointPageTarget = 64 << 10
  /// Longest page message a reader accepts: a page of slots, a chunk (at most 64 KiB), or the
  /// target plus one tombstone with the longest key, with the message's framing.
  public static let maximumCheckpointPageLength: UInt32 = 256 << 10
  /// Longest root message a reader accepts (over a million segments or groups).
  public static let maximumCheckpointRootLength: UInt32 = 64 << 20
  /// The identity a checkpoint binds: the HMAC-SHA256 that ends the header's wrapped-key
  /// message, fresh at every store creation and password change.
  public static let checkpointIdentityLength = 32

  // MARK: Keys

  /// The byte that closes a key's group, its namespace: the key `group + U+0000 + rest` is in
  /// the group `group`, and a key without the byte is in none. The engine indexes each group
  /// in its own table (listing or counting a group costs that group's size); the collection
  /// layer gives each collection one group, named after it (Docs/FORMAT.md, "Keys and groups").
  /// The byte is in the key's plaintext only: on disk the whole key is one sealed message.
  public static let keyGroupSeparator: UInt8 = 0
  /// `keyGroupSeparator` as text, for building keys.
  public static let keyGroupSeparatorText = String(UnicodeScalar(keyGroupSeparator))
  /// The first byte of every group reserved for the layers above the engine (a collection's
  /// secondary indexes and their catalogues); no collection name may start with it.
  public static let reservedGroupByte: UInt8 = 1
  /// The group whose keys name kept groups: a key `keptGroupsCatalog + U+0000 + group` says
  /// that a layer above keeps data derived from `group`'s keys (a collection's secondary
  /// indexes, whose catalogue that key's value is), so the engine refuses a write to `group`
  /// in a commit whose hook does not keep it (`CaskError.writeRefused`, Docs/FORMAT.md, "Keys
  /// and groups").
  public static let keptGroupsCatalog = "\u{1}cask.indexes"

  /// The group whose keys name the tracked groups: `trackedGroupsGroup + U+0000 + group` marks
  /// `group` as tracked (its value belongs to the layer that tracks it: sync keeps its cursor
  /// there). Every commit that writes a key of a tracked group also writes, in the same atomic
  /// batch, that key's change mark (Docs/FORMAT.md, "Tracked groups").
  public static let trackedGroupsGroup = "__tracked"
  /// Change marks of a tracked group live in the group `changeMarkPrefix + group`, one key per
  /// changed key (`... + U+0000 + the key's part after its group`), holding a token that changes
  /// with every change of that key.
  public static let changeMarkPrefix = "__changes:"

  // MARK: Limits

  /// A value message's plaintext starts with the key's length (2 bytes, little-endian) and the
  /// key's UTF-8 bytes, then the value.
  public static let valueKeyLengthPrefix = 2

  /// Longest key, in UTF-8 bytes.
  public static let maximumKeyLength = 65_535
  /// Largest value: 2 GiB. A record's lengths are 32-bit and a segment is addressed by
  /// 32-bit offsets, so a record must fit in 4 GiB with its encryption overhead.
  public static let maximumValueLength = 1 << 31
  /// Largest segment file: offsets in the index are 32-bit.
  public static let maximumSegmentLength: UInt64 = 1 << 32 - 1
  /// Longest header file the store reads (Docs/FORMAT.md, section 12): far above a header
  /// with thousands of key epochs; a longer one is refused before it is read.
  public static let maximumHeaderFileLength: UInt64 = 1 << 20
  /// Longest manifest the store reads (section 12): over two million segments.
  public static let maximumManifestLength: UInt64 = 64 << 20
  /// How much longer than its segment a hint file can be (section 12): a hint entry is
  /// shorter than its record, so a hint is at most its segment's length plus the magic, the
  /// message's framing, the payload head and the group section.
  public static let hintOverheadBound: UInt64 = UInt64(hintSizingLength) + 1024

  // MARK: Working sizes (never on disk)

  /// How many index entries compaction applies per hold of the state lock (Docs/ARCHITECTURE.md,
  /// section 9, rule 6): readers and writers wait for at most that many at a time.
  static let compactionIndexChunk = 4096
  /// Compaction's unit of I/O: live records lying within this many bytes of a run's first are
  /// read in one positioned read, and copies are written to the output in buffers this long.
  static let compactionIOLength = 1 << 20
  /// The alignment of the point up to which the append path starts writeback (64 KiB): the
  /// page being filled is left alone.
  static let writebackAlignment: UInt64 = 64 << 10
}
