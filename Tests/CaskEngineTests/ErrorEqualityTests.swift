import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// `CaskError`'s `==`: every case equals itself with the same details and differs with others.
@Suite("Errors compare by case and details")
struct ErrorEqualityTests {
  /// One value of every case, each with details no other value shares.
  static let samples: [CaskError] = [
    .wrongPassword, .notACaskStore(path: "p"), .storeNotFound(path: "p"), .unsupportedVersion(found: 1, supported: 2),
    .locked(path: "p"),
    .alreadyOpen(path: "p"), .wrongCredentialType, .invalidKey(reason: "r"), .valueTooLarge(length: 1, maximum: 2),
    .closed, .readOnly, .reentrantCall(operation: "put"), .writeRefused(group: "g", reason: "r"),
    .corrupt(file: "f", offset: 1, reason: "r"),
    .io(operation: "open", path: "p", errno: 2), .crypto("c"),
  ]

  @Test("each case equals itself, reentrantCall too, and no other case")
  func everyCaseEqualsItselfOnly() {
    for (i, lhs) in Self.samples.enumerated() {
      for (j, rhs) in Self.samples.enumerated() {
        #expect((lhs == rhs) == (i == j), "\(lhs) vs \(rhs)")
      }
    }
    #expect(CaskError.reentrantCall(operation: "put") != .reentrantCall(operation: "compact"))
    #expect(CaskError.corrupt(file: "f", offset: 1, reason: "r") != .corrupt(file: "f", offset: 2, reason: "r"))
  }
}
