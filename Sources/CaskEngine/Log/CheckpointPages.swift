import Foundation
import RNCryptorCodec
import Synchronization

/// The pages of one `CHECKPOINT` file, read on demand (Docs/FORMAT.md, section 18): open
/// authenticates the root alone, which gives every page's length (so its place in the file)
/// and the file's nonce, and a page is read, checked and decrypted the first time the index
/// touches it. Shared by every table loaded from the file and by their copies.
///
/// The file stays open until the last table that may still read from it goes away: a new
/// checkpoint renamed over it leaves this one readable (a rename keeps the inode), and
/// positioned reads, unlike a mapping, cannot fault when the file is cut short under it.
///
/// A page that is missing, damaged or not the root's is reported once and for good: `damage`
/// is set, and the index that reads from this file must answer nothing more (`KeyDirectory`
/// `damage`). A writable store also removes the `CHECKPOINT` then, so that the next open
/// rebuilds the index from the hints and the log.
final class CheckpointPages: @unchecked Sendable {
  // Constant after `init`. `read` gives the bytes at an offset (`nil` unless whole); it is
  // called from any thread that loads a page (positioned reads share no file offset).
  private let read: (UInt64, Int) -> [UInt8]?
  private let closeFile: (() -> Void)?
  private let path: String
  private let cipher: RecordCipher
  private let references: [Checkpoint.PageReference]
  private let nonce: Checkpoint.Nonce
  /// Where each page's message starts in the file.
  let positions: [UInt64]
  /// The lengths of the segments the root lists: a loaded slot's location must lie inside.
  let segmentLengths: SegmentLengths
  /// Removes the file when a page fails: `nil` for a read-only store (or a reader that only
  /// checks a file). A closure rather than an optional file system and path: an optional
  /// pair, or an optional existential, is a generic type of its own, whose metadata a process
  /// makes at its first open.
  private let removeFile: (() -> Void)?
  private let failure = Locked<CaskError?>(nil)
  /// How many pages have been read from the file: what shows which loads open and each
  /// operation cost (the tests count them).
  let reads = Atomic<Int>(0)

  /// Pages of `root`'s file read through `read`; `closeFile` runs when the last table that
  /// may read from it goes away, `removeFile` when the first page fails.
  init(
    root: Checkpoint, cipher: RecordCipher, path: String, read: @escaping (UInt64, Int) -> [UInt8]?,
    closeFile: (() -> Void)? = nil, removeFile: (() -> Void)? = nil
  ) {
    self.read = read
    self.closeFile = closeFile
    self.path = path
    self.cipher = cipher
    references = root.pages
    nonce = root.nonce
    var position = UInt64(CaskFormat.checkpointHeadLength + root.rootMessageLength)
    var positions: [UInt64] = []
    positions.reserveCapacity(root.pages.count)
    for page in root.pages {
      positions.append(position)
      position += UInt64(page.length)
    }
    self.positions = positions
    segmentLengths = SegmentLengths(root.segments)
    self.removeFile = removeFile
  }

  deinit {
    closeFile?()
  }

  /// The first page that failed, as the error every later use of the index throws; `nil`
  /// while none has.
  var damage: CaskError? { failure.withLock { $0 } }

  /// The contents (after the page head) of page `number`, which must be of `kind` and `table`
  /// and hold `count` slots or bytes (any number of tombstones for `nil`).
  ///
  /// - Throws: `Checkpoint.Rejection` when it cannot be read whole, it does not authenticate,
  ///   or its head (number, kind, table, count, the file's nonce) is not the expected one.
  /// - Complexity: one positioned read and one decryption of the page.
  func contents(of number: Int, kind: UInt8, table: Int, count: Int?) throws(Checkpoint.Rejection) -> Data {
    guard number < references.count else {
      throw Checkpoint.Rejection(reason: "page \(number) is missing, damaged or not the root's")
    }
    reads.add(1, ordering: .relaxed)
    return try Checkpoint.openPage(
      read(positions[number], Int(references[number].length)), nonce: nonce, number: number,
      at: positions[number], kind: kind, table: table, count: count, cipher: cipher)
  }

  /// Records that page `number` failed (only the first failure is kept) and, for a writable
  /// store, removes the checkpoint so that the next open does not use it.
  ///
  /// - Returns: the error the index reports from now on.
  @discardableResult
  func fail(page number: Int, _ rejection: Checkpoint.Rejection) -> CaskError {
    let offset = number < positions.count ? positions[number] : 0
    let error = CaskError.corrupt(
      file: path, offset: offset,
      reason: "\(rejection.reason); the index loaded from the checkpoint is incomplete, reopen the store to rebuild it"
    )
    let first = failure.withLock { kept -> Bool in
      guard kept == nil else { return false }
      kept = error
      return true
    }
    if first, let removeFile {
      // The log holds every record the checkpoint described: the next open reads it instead.
      removeFile()
    }
    return damage ?? error
  }
}

extension Checkpoint {
  /// Checks and decrypts one page's `message` (`nil`: it could not be read whole), page
  /// `number` of the file whose root holds `nonce`, read at `position`.
  ///
  /// - Throws: `Rejection` unless the message authenticates and holds a page of `kind`,
  ///   `number` and `table` that states `count` (for `nil`, any number above 0) and carries
  ///   `nonce`; the contents are the caller's to decode and check.
  static func openPage(
    _ message: [UInt8]?, nonce: Nonce, number: Int, at position: UInt64, kind: UInt8, table: Int,
    count: Int?, cipher: RecordCipher
  ) throws(Rejection) -> Data {
    guard let message,
      let plaintext = try? cipher.open(Data(message), file: CaskFormat.checkpointFileName, offset: position)
    else { throw Rejection(reason: "page \(number) is missing, damaged or not the root's") }
    let head = CaskFormat.checkpointPageHeadLength
    let ownNonce = plaintext.withUnsafeBytes { buffer -> Bool in
      guard buffer.count >= head else { return false }
      let at = head - CaskFormat.checkpointNonceLength
      return loadLittleEndian(buffer, at: at, as: UInt64.self) == nonce.first
        && loadLittleEndian(buffer, at: at + 8, as: UInt64.self) == nonce.second
    }
    guard ownNonce else { throw Rejection(reason: "page \(number) is missing, damaged or not the root's") }
    let matches = plaintext.withUnsafeBytes { buffer -> Bool in
      var header = ByteReader(buffer)
      guard header.readUInt8() == CaskFormat.messageTagCheckpointPage, header.readUInt8() == kind,
        header.readUInt16() == 0, header.readUInt32() == UInt32(number), header.readUInt32() == UInt32(table),
        let stated = header.readUInt32()
      else { return false }
      // Slots, chunks and sorted keys are written compactly: their decoding checks the length.
      if let count { return Int(stated) == count }
      return stated > 0
    }
    guard matches else { throw Rejection(reason: "page \(number) is malformed") }
    return plaintext.subdata(in: plaintext.startIndex + head..<plaintext.endIndex)
  }
}

/// The lengths of the segments a checkpoint's root lists, by id (the first entry of an id),
/// in two sorted arrays of integers: a dictionary of them was a generic type of its own, whose
/// metadata a process makes at its first open.
struct SegmentLengths: Sendable {
  private let ids: [UInt32]
  private let lengths: [UInt64]

  init(_ segments: [Checkpoint.SegmentEntry]) {
    // Sorted by id, then by position, so that the first entry of an id comes first.
    let order = segments.indices.sorted { (segments[$0].id, $0) < (segments[$1].id, $1) }
    var ids: [UInt32] = []
    var lengths: [UInt64] = []
    ids.reserveCapacity(order.count)
    lengths.reserveCapacity(order.count)
    for position in order where ids.last != segments[position].id {
      ids.append(segments[position].id)
      lengths.append(segments[position].length)
    }
    self.ids = ids
    self.lengths = lengths
  }

  /// The length of segment `id`, `nil` when the root does not list it.
  ///
  /// - Complexity: O(log s) for the s segments listed.
  subscript(id: UInt32) -> UInt64? {
    let at = SortedSegmentIDs.lowerBound(of: id, in: ids.count) { ids[$0] }
    return at < ids.count && ids[at] == id ? lengths[at] : nil
  }
}
