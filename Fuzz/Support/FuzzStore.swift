import CaskEngine
import CaskTestSupport
import Foundation
import RNCryptorCodec

/// A store laid out on an in-memory disk from fuzzed files, opened through the package API.
///
/// Every target that fuzzes store files uses the same fixed keys, so that the committed seeds
/// (made by `--make-corpus`) authenticate and the fuzzer starts from files the engine accepts.
package enum FuzzStore {
  /// Where the store lives on the in-memory disk.
  package static let path = "/fuzz/store"

  /// The caller's keys, which wrap the data key in the header.
  package static let userKeys = keys(from: 0x10)
  /// The store's data key, under which every record and hint is sealed.
  package static let dataKeys = keys(from: 0x80)

  private static func keys(from start: UInt8) -> RNCryptor.Keys {
    let encryption = Data((0..<32).map { start &+ UInt8($0) })
    let hmac = Data((0..<32).map { start &+ 0x40 &+ UInt8($0) })
    do {
      return try RNCryptor.Keys(encryptionKey: encryption, hmacKey: hmac)
    } catch {
      fatalError("fixed fuzzing keys: \(error)")
    }
  }

  /// A deterministic IV, so that seeds are the same bytes on every run of the corpus script.
  package static func iv(_ index: Int) -> Data {
    Data((0..<16).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0 &* 7) })
  }

  /// A key message (options 0) sealed under `keys` with a fixed IV.
  package static func seal(_ plaintext: Data, keys: RNCryptor.Keys = dataKeys, iv index: Int) -> Data {
    do {
      return try RNCryptor.seal(plaintext, keys: keys, salts: nil, iv: iv(index))
    } catch {
      fatalError("sealing a seed: \(error)")
    }
  }

  /// The 64 bytes of `keys` (encryption key, then HMAC key), as a header wraps a data key.
  package static func keyBytes(_ keys: RNCryptor.Keys) -> Data {
    var bytes = keys.encryptionKey.withUnsafeBytes { Data($0) }
    keys.hmacKey.withUnsafeBytes { bytes.append(contentsOf: $0) }
    return bytes
  }

  /// The `CASK` file of the fuzzing store: the data key wrapped under `userKeys`. Sealed once
  /// per process (the same bytes every time: fixed keys and IV), not once per input.
  package static let headerFile = Data(
    FuzzingEntry.storeHeader(
      wrappedKey: seal(keyBytes(dataKeys), keys: userKeys, iv: 0), passwordWrapped: false,
      version: CaskFormat.boundRecordsVersion))

  /// Key epoch 0's data key in the fuzzing store with key epochs, whose current epoch 1 has
  /// `dataKeys` (so that the same seeds and scripts seal under the current key).
  package static let olderDataKey = Data((0..<64).map { UInt8(0x30 + $0) })

  /// The `CASK` file of the fuzzing store with key epochs (header version 4): `dataKeys`, the
  /// key of current epoch 1, wrapped under `userKeys`; the key ring, sealed under `dataKeys`,
  /// holds epoch 0's key.
  package static let epochHeaderFile = Data(
    FuzzingEntry.keyRingStoreHeader(
      wrappedKey: seal(keyBytes(dataKeys), keys: userKeys, iv: 0),
      keyRing: seal(FuzzingEntry.keyRingPlaintext(currentEpoch: 1, older: [(0, olderDataKey)]), iv: 9)))

  /// A `MANIFEST` file: `payload` sealed under `keys` behind the magic.
  package static func manifestFile(_ payload: Data, keys: RNCryptor.Keys = dataKeys) -> Data {
    Data(CaskFormat.manifestMagic) + seal(payload, keys: keys, iv: 8)
  }

  /// A `MANIFEST` listing no segment, whose next segment number is 1: segment 1, under the
  /// current key epoch, then counts as started after it was written, whatever its length and
  /// order. Prevents: every open refused for its missing manifest (a version 3 store with
  /// segments must have one), so that no input reached the reads behind open.
  package static func emptyManifest(hasEpochs: Bool) -> Data {
    do {
      return manifestFile(
        try FuzzingEntry.manifestPayload(
          generation: 1, lastSequence: 0, nextSegmentID: 1, segments: [], hasEpochs: hasEpochs, dataKeys: dataKeys))
    } catch {
      fatalError("the fuzzing store's manifest: \(error)")
    }
  }

  /// Lays out `files` (name to bytes) in the store directory of a fresh in-memory disk, or of a
  /// `snapshot()` of `template` (a disk laid out once per process with the files that are the
  /// same for every input; the snapshot holds them durable, as this function leaves its own).
  package static func disk(with files: [(String, Data)], on template: FaultyFileSystem? = nil) -> FaultyFileSystem {
    do {
      if let template {
        // Prevents: a tenth of fuzz-header's time going to opening, writing, syncing and
        // closing the per-input files through the file system's operations.
        return try template.snapshot(adding: files.map { ("\(path)/\($0.0)", [UInt8]($0.1)) })
      }
    } catch {
      fatalError("laying out the fuzzing store: \(error)")
    }
    let fileSystem = FaultyFileSystem(directories: [path])
    do {
      for (name, bytes) in files {
        let file = try fileSystem.open("\(path)/\(name)", mode: .createNew)
        try file.write(bytes, at: 0)
        try file.sync()
        file.close()
      }
      try fileSystem.syncDirectory(path)
    } catch {
      fatalError("laying out the fuzzing store: \(error)")
    }
    return fileSystem
  }

  /// Options for opening the fuzzing store: no background work, nothing created.
  package static func options(_ fileSystem: FaultyFileSystem, readOnly: Bool, segmentSizeLimit: UInt64 = 1 << 20)
    -> CaskStore.Options
  {
    var options = CaskStore.Options(
      durability: .never, segmentSizeLimit: segmentSizeLimit, autoCompaction: nil, readOnly: readOnly)
    options.createIfMissing = false
    options.fileSystem = fileSystem
    return options
  }

  /// Opens the store on `fileSystem` and reads everything it claims to hold: every key's
  /// value, then `verify()`. Only `CaskError` may come out of any of it; a crash, a trap or
  /// another error is a defect.
  ///
  /// - Returns: the opened store's number of keys, or `nil` when open refused the files.
  @discardableResult
  package static func openAndReadAll(_ fileSystem: FaultyFileSystem, readOnly: Bool, segmentSizeLimit: UInt64 = 1 << 20)
    -> Int?
  {
    let store: CaskStore
    do {
      store = try CaskStore(
        path: path, keys: userKeys,
        options: options(fileSystem, readOnly: readOnly, segmentSizeLimit: segmentSizeLimit))
    } catch {
      FuzzReplay.check(error is CaskError, "open threw a non-CaskError: \(type(of: error))")
      return nil
    }
    defer { try? store.close() }
    return readAll(store, readOnly: readOnly)?.readable ?? 0
  }
}

/// Builds segment files with the real record encoder and deterministic messages.
package struct SegmentBuilder {
  package private(set) var bytes: [UInt8]
  private var serial: Int
  private let id: UInt32

  /// A segment with its header; `serial` offsets the IVs so that two builders differ; `epoch`
  /// is the key epoch its header names.
  package init(id: UInt32 = 1, base: UInt32 = 1, sub: UInt32 = 0, serial: Int = 0, epoch: UInt32 = 0) {
    bytes = FuzzingEntry.segmentHeader(id: id, base: base, sub: sub, epoch: epoch)
    self.serial = serial
    self.id = id
  }

  /// Appends a put (a value) or a delete (`nil`), with the batch flags given.
  ///
  /// - Returns: the record's offset and length, for hint entries.
  @discardableResult
  package mutating func append(key: String, value: String?, flags: UInt8, sequence: UInt64) throws -> (
    offset: UInt32, length: UInt32
  ) {
    serial += 1
    let valueMessage = try value.map {
      FuzzStore.seal(
        try FuzzingEntry.valuePlaintext(Data($0.utf8), forKey: key, dataKeys: FuzzStore.dataKeys),
        iv: 1000 + serial)
    }
    let offset = bytes.count
    // Sealed for its place, as the writer seals it (format version 3).
    let keyMessage = FuzzStore.seal(
      FuzzingEntry.keyPlaintext(
        Data(key.utf8), delete: value == nil, flags: flags, segmentID: id, offset: UInt64(offset), sequence: sequence,
        valueMessage: valueMessage),
      iv: serial)
    FuzzingEntry.appendRecord(
      to: &bytes, delete: value == nil, flags: flags, sequence: sequence, keyMessage: keyMessage,
      valueMessage: valueMessage)
    return (UInt32(offset), UInt32(bytes.count - offset))
  }

  /// Cuts the last `count` bytes (a torn tail).
  package mutating func cut(_ count: Int) {
    bytes.removeLast(min(count, bytes.count))
  }
}
