import Foundation
import RNCryptorCodec

/// What `fuzz-store` reaches through: a whole store of the current format version (an
/// authenticated header, linked segments, hints, a manifest and a checkpoint), whose files the
/// target repairs after mutation so that changed fields get past the checksums and MACs into
/// the checks behind them (Docs/RELIABILITY.md). Nothing here is used by the engine itself.
extension FuzzingEntry {
  /// The data key a store header (`CASK` bytes) wraps under `userKeys`.
  ///
  /// - Returns: `nil` when the header does not parse or does not unwrap under `userKeys`.
  package static func dataKeys(ofHeader bytes: [UInt8], userKeys: RNCryptor.Keys) -> RNCryptor.Keys? {
    guard let header = try? StoreHeader.decode(Data(bytes), path: CaskFormat.headerFileName) else { return nil }
    return try? StoreCredential.keys(userKeys).unwrap(header, path: CaskFormat.headerFileName)
  }

  /// Plants a bug on purpose, for showing that `fuzz-store` catches one: open then loads any
  /// checkpoint that authenticates without matching it against the log
  /// (`Options.checksCheckpoint` off), so a checkpoint of another time than the segments is
  /// trusted. Only the fuzz target calls it, and only when asked (Docs/RELIABILITY.md).
  package static func plantCheckpointTrustedBlindly(in options: inout CaskStore.Options) {
    options.checksCheckpoint = false
  }

  /// Rewrites a header file's MAC (under `dataKeys`) and CRC in place where the lengths it
  /// claims fit, as a writer holding the data key would: a version 5 header's fields, changed
  /// by a mutation, then reach the reads behind its MAC. A header without the authenticated
  /// flag gets its CRC only.
  package static func reauthenticateHeader(_ bytes: inout [UInt8], dataKeys: RNCryptor.Keys) {
    let fixed = CaskFormat.headerFixedLength
    guard bytes.count >= fixed + 4 else { return }
    let flags = UInt16(bytes[CaskFormat.headerFlagsOffset]) | UInt16(bytes[CaskFormat.headerFlagsOffset + 1]) << 8
    guard flags & CaskFormat.headerFlagAuthenticated != 0 else {
      repairHeaderChecksum(&bytes)
      return
    }
    var end = fixed + Int(load(bytes, at: CaskFormat.headerWrappedLengthOffset))
    if flags & CaskFormat.headerFlagKeyRing != 0 {
      guard end <= bytes.count - 8 else { return }
      end += 4 + Int(load(bytes, at: end))
    }
    end += CaskFormat.storeIdentityLength
    guard end <= bytes.count - CaskFormat.authenticatorLength - 4,
      let mac = try? StoreHeader.authenticator(of: Array(bytes[0..<end]), keys: dataKeys)
    else { return }
    bytes.replaceSubrange(end..<end + CaskFormat.authenticatorLength, with: mac)
    end += CaskFormat.authenticatorLength
    store(checksum(bytes[0..<end]), in: &bytes, at: end)
  }

  /// Rewrites a segment file's checksums and, when its header says version 5, its link's MAC
  /// (under `keys`), then every record's CRC from the first record on, walking the lengths the
  /// records claim until one runs past the end. The link's fields (identity, predecessor) are
  /// left as they are: whether they match the other segments is what open checks.
  package static func reauthenticateSegment(_ bytes: inout [UInt8], keys: RNCryptor.Keys) {
    let headerLength = CaskFormat.segmentHeaderLength
    guard bytes.count >= headerLength else { return }
    store(checksum(bytes[0..<CaskFormat.segmentHeaderChecksummedLength]), in: &bytes, at: headerLength - 4)
    let version = UInt16(bytes[CaskFormat.headerVersionOffset]) | UInt16(bytes[CaskFormat.headerVersionOffset + 1]) << 8
    var position = headerLength
    if version == CaskFormat.authenticatedVersion {
      let linkEnd = headerLength + CaskFormat.segmentLinkLength
      guard bytes.count >= linkEnd else { return }
      let covered = linkEnd - CaskFormat.authenticatorLength
      guard let mac = try? StoreHeader.authenticator(of: Array(bytes[0..<covered]), keys: keys) else { return }
      bytes.replaceSubrange(covered..<linkEnd, with: mac)
      position = linkEnd
    }
    repairRecordChecksums(&bytes, from: position)
  }

  /// The plaintexts of a `CHECKPOINT` file under `dataKeys`, the root's first, then each page
  /// the root lists: what `fuzz-store` seeds hold in place of the sealed file.
  ///
  /// - Returns: `nil` when the file's root does not read or a page does not authenticate.
  package static func checkpointPlaintexts(ofFile file: [UInt8], dataKeys: RNCryptor.Keys) -> [Data]? {
    let cipher = RecordCipher(keys: dataKeys, version: CaskFormat.boundRecordsVersion)
    let read = { (offset: UInt64, count: Int) -> [UInt8]? in
      guard offset <= UInt64(file.count), count <= file.count - Int(offset) else { return nil }
      return Array(file[Int(offset)..<Int(offset) + count])
    }
    guard let root = try? Checkpoint.readRoot(size: UInt64(file.count), cipher: cipher, read: read) else {
      return nil
    }
    var position = CaskFormat.checkpointHeadLength
    let rootLength = root.rootMessageLength
    guard let rootPlaintext = try? cipher.open(Data(file[position..<position + rootLength]), file: "", offset: 0)
    else { return nil }
    position += rootLength
    var plaintexts = [rootPlaintext]
    for page in root.pages {
      let end = position + Int(page.length)
      guard let plaintext = try? cipher.open(Data(file[position..<end]), file: "", offset: 0) else { return nil }
      plaintexts.append(plaintext)
      position = end
    }
    return plaintexts
  }
}
