import CipherCask
import Foundation

/// The warning `cask` prints when a write beside the log failed after the command's work was
/// synced (`CaskStore.backgroundWriteFailure`): which of those writes it was, and why nothing
/// was lost by it. It names files and system errors only, never a key, value or password.
enum BackgroundWriteWarning {
  /// The writes the engine keeps a failure of rather than throwing it.
  enum Kind: Equatable {
    case hint
    case manifest
    case header
    case checkpoint
    /// A failure that names none of the files above (a directory's sync, say).
    case unknown
  }

  /// The warning's text for `failure`.
  static func message(for failure: CaskError) -> String {
    let cause = ErrorMessage.describe(failure)
    switch kind(of: failure) {
    case .hint:
      return "a hint file could not be written (\(cause)); nothing was lost: the next open reads its segment instead"
    case .manifest:
      return
        "the manifest could not be written (\(cause)); nothing was lost: the one before stays true, "
        + "and the next open checks it against the log"
    case .header:
      return
        "the header could not be rewritten without the keys no longer used (\(cause)); nothing was lost: "
        + "the next writable open or compaction drops them"
    case .checkpoint:
      return
        "a checkpoint could not be written (\(cause)); nothing was lost: the next open reads the log "
        + "after the checkpoint before"
    case .unknown:
      return
        "a write beside the log (a hint, the manifest, the header or a checkpoint) failed (\(cause)); "
        + "nothing was lost: the next open checks what it finds against the log"
    }
  }

  /// Which write failed: read from the file the error names (its temporary name included) or,
  /// for a failure the engine described itself, from its operation.
  static func kind(of failure: CaskError) -> Kind {
    guard case .io(let operation, let path, _) = failure else { return .unknown }
    var name = (path as NSString).lastPathComponent
    if name.hasSuffix(CaskFormat.temporarySuffix) { name.removeLast(CaskFormat.temporarySuffix.count) }
    if name.hasSuffix("." + CaskFormat.hintExtension) || operation.hasSuffix(" hint") { return .hint }
    if name == CaskFormat.manifestFileName || operation.hasSuffix(" manifest") { return .manifest }
    if name == CaskFormat.headerFileName || operation.hasSuffix(" header") { return .header }
    if name == CaskFormat.checkpointFileName || operation.hasSuffix(" checkpoint") { return .checkpoint }
    return .unknown
  }
}
