import Foundation
import RNCryptorCodec

/// The data keys of a store, one per **key epoch** (Docs/FORMAT.md, section 3a). A password or
/// key change starts a new epoch with a new random data key; every segment (and its hint) is
/// sealed under exactly one epoch's key, named in its header, and the manifest and integrity
/// tokens under the current one. The header of a store with epochs (version 4) wraps the
/// current key under the password and carries the older keys still in use in its key ring,
/// sealed under the current key: an old header, which wraps an older key, opens nothing sealed
/// after it.
///
/// Ring plaintext (a key message under the current data key, inside the header):
/// ```
/// 0 tag 'R'(1)  1 flags(1)  2 reserved(2)  4 current epoch(4)  8 older count n(4)
/// 12 pinned epoch(4)  16 pinned manifest digest(32)  48 n × (epoch(4) data key(64)), epochs increasing
/// ```
struct KeyRing: Sendable {
  /// The manifest sealed under an older epoch's key that open still accepts: the one on disk
  /// when the header that started the current epoch was written, so that a crash between that
  /// header and the first manifest under the new key is not taken for tampering. Named by
  /// its last 32 bytes (its HMAC), so no other manifest under that key passes.
  struct PinnedManifest: Equatable, Sendable {
    var epoch: UInt32
    var digest: [UInt8]
  }

  /// The keys new records, hints, manifests and tokens are sealed under. In a version 5 store
  /// (one with an identity) it prepares tombstones short, as its segments seal them.
  var current: RecordCipher {
    didSet { current = current.withShortTombstones(identity != nil) }
  }
  /// Older epochs whose keys still seal a segment on disk, by epoch.
  var older: [UInt32: RecordCipher] = [:]
  /// Whether the header is a version 4 one, with a ring; `false` for a version 2 or 3 store,
  /// whose only key is epoch 0.
  var hasEpochs = false
  var pinnedManifest: PinnedManifest?
  /// The store's identity, from its version 5 header (authenticated with it); `nil` before
  /// version 5. A copy that shares the data key (a backup) gets an identity of its own.
  var identity: [UInt8]? {
    didSet { current = current.withShortTombstones(identity != nil) }
  }

  init(current: RecordCipher) {
    self.current = current
  }

  /// The keys of `epoch`, if the ring holds them.
  func cipher(forEpoch epoch: UInt32) -> RecordCipher? {
    epoch == current.epoch ? current : older[epoch]
  }

  /// The older epochs, in increasing order.
  var olderEpochs: [UInt32] { older.keys.sorted() }

  /// The header version this ring needs: 5 with an identity, 4 with epochs, else the records'
  /// version.
  var headerVersion: UInt16 {
    identity != nil ? CaskFormat.authenticatedVersion : hasEpochs ? CaskFormat.keyEpochsVersion : current.version
  }

  /// The ring's key message for the header, under the current data key. The plaintext (which
  /// holds the older keys) is built and sealed in wiping memory.
  func sealed() throws -> Data {
    let epochs = olderEpochs
    let length = CaskFormat.keyRingFixedLength + epochs.count * CaskFormat.keyRingEntryLength
    let plaintext = SecureBytes(count: length) { buffer in
      buffer[0] = CaskFormat.messageTagKeyRing
      buffer[1] = pinnedManifest == nil ? 0 : CaskFormat.keyRingFlagPinnedManifest
      buffer.storeBytes(
        of: current.epoch.littleEndian, toByteOffset: CaskFormat.keyRingCurrentEpochOffset, as: UInt32.self)
      buffer.storeBytes(
        of: UInt32(epochs.count).littleEndian, toByteOffset: CaskFormat.keyRingOlderCountOffset, as: UInt32.self)
      if let pinned = pinnedManifest {
        buffer.storeBytes(
          of: pinned.epoch.littleEndian, toByteOffset: CaskFormat.keyRingPinnedEpochOffset, as: UInt32.self)
        for (index, byte) in pinned.digest.enumerated() { buffer[CaskFormat.keyRingPinnedDigestOffset + index] = byte }
      }
      for (position, epoch) in epochs.enumerated() {
        let start = CaskFormat.keyRingFixedLength + position * CaskFormat.keyRingEntryLength
        buffer.storeBytes(of: epoch.littleEndian, toByteOffset: start, as: UInt32.self)
        let key = StoreCredential.concatenate(older[epoch]!.keys)
        key.withUnsafeBytes {
          UnsafeMutableRawBufferPointer(rebasing: buffer[(start + 4)..<(start + 4 + CaskFormat.dataKeyLength)])
            .copyMemory(from: $0)
        }
      }
    }
    do {
      return try RNCryptor.encrypt(secret: plaintext, keys: current.keys)
    } catch {
      throw CaskError.crypto(String(describing: error))
    }
  }

  /// Opens a header's key ring with the data key the header unwrapped.
  ///
  /// - Parameters:
  ///   - recordVersion: the records' format version (3).
  ///   - offset: where the ring's message starts in the header file, for errors.
  /// - Throws: `CaskError.corrupt` when it does not authenticate under that key or is
  ///   malformed (the header's CRC matched, so this is not accidental damage).
  static func open(
    _ message: Data, currentKeys: RNCryptor.Keys, recordVersion: UInt16, path: String, offset: UInt64
  ) throws -> KeyRing {
    let malformed = CaskError.corrupt(file: path, offset: offset, reason: "malformed key ring")
    let plaintext: SecureBytes
    do {
      plaintext = try RNCryptor.decryptSecret(message, keys: currentKeys)
    } catch let error as RNCryptor.Error {
      throw CaskError.corrupt(file: path, offset: offset, reason: "key ring: \(error.description)")
    }
    return try plaintext.withUnsafeBytes { buffer -> KeyRing in
      guard buffer.count >= CaskFormat.keyRingFixedLength, buffer[0] == CaskFormat.messageTagKeyRing,
        buffer[1] & ~CaskFormat.keyRingFlagPinnedManifest == 0, buffer[2] == 0, buffer[3] == 0
      else { throw malformed }
      let currentEpoch = loadLittleEndian(buffer, at: CaskFormat.keyRingCurrentEpochOffset, as: UInt32.self)
      let count = Int(loadLittleEndian(buffer, at: CaskFormat.keyRingOlderCountOffset, as: UInt32.self))
      guard buffer.count == CaskFormat.keyRingFixedLength + count * CaskFormat.keyRingEntryLength else {
        throw malformed
      }
      var ring = KeyRing(current: RecordCipher(keys: currentKeys, version: recordVersion, epoch: currentEpoch))
      ring.hasEpochs = true
      if buffer[1] & CaskFormat.keyRingFlagPinnedManifest != 0 {
        ring.pinnedManifest = PinnedManifest(
          epoch: loadLittleEndian(buffer, at: CaskFormat.keyRingPinnedEpochOffset, as: UInt32.self),
          digest: Array(buffer[CaskFormat.keyRingPinnedDigestOffset..<CaskFormat.keyRingFixedLength]))
      }
      var previous: UInt32?
      for position in 0..<count {
        let start = CaskFormat.keyRingFixedLength + position * CaskFormat.keyRingEntryLength
        let epoch = loadLittleEndian(buffer, at: start, as: UInt32.self)
        // Increasing, and all below the current epoch: each epoch named once.
        guard epoch < currentEpoch, previous.map({ $0 < epoch }) ?? true else { throw malformed }
        previous = epoch
        let key = start + 4
        let keys = try RNCryptor.Keys(
          encryptionKey: SecureBytes(
            UnsafeRawBufferPointer(rebasing: buffer[key..<key + CaskFormat.dataKeyPartLength])),
          hmacKey: SecureBytes(
            UnsafeRawBufferPointer(
              rebasing: buffer[(key + CaskFormat.dataKeyPartLength)..<(key + CaskFormat.dataKeyLength)])))
        ring.older[epoch] = RecordCipher(keys: keys, version: recordVersion, epoch: epoch)
      }
      if let pinned = ring.pinnedManifest, ring.older[pinned.epoch] == nil { throw malformed }
      return ring
    }
  }
}
