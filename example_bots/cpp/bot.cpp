// A Tacocat Arena bot in C++: the greedy plan of example_bots/greedy_bot.py over raw gRPC.
//
// The round is won by the LOWER last card and a sacrifice always costs the lowest card, so:
//   replace: throw away middle cards (5-8), good neither for fighting nor for the showdown;
//   duel:    win the first attack with the highest card (with two cards, keep the higher back);
//   attack:  as many cards as possible without spending the lowest card;
//   defend:  beat each attack card with the cheapest card that does it, never the lowest.
//
// Protocol (proto/tacocat/v1/arena.proto, docs/protocol.md): one Arena.Play stream; Hello
// first; one Action per DecisionRequest, echoing game_id and request_id; Errors logged; a
// RefereeBatch handled element by element, its answers sent back in one ActionBatch;
// SessionEnd -> half-close and exit 0; a non-OK status -> "STATUS: message" on stderr, exit 1.
// It reads TACOCAT_ARENA_ADDRESS (host:port or unix:PATH), TACOCAT_ARENA_TOKEN, TACOCAT_ARENA_BOT.
//
// On stderr, one line each: when it connects (address, bot, session), when the session ends
// (the reason) and when the connection is lost. For a `serve` arena (a TCP address) it then
// reconnects after SERVER_SHUTDOWN or a lost stream, with backoff, as the Python SDK and the
// Node example do; TACOCAT_BOT_RECONNECT=0 turns that off (see reconnects_by_default).

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "tacocat/v1/arena.grpc.pb.h"

namespace pb = tacocat::v1;

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

std::vector<uint32_t> hand_of(const pb::DecisionRequest& request) {
  // The referee sends hands ascending.
  return {request.view().hand().begin(), request.view().hand().end()};
}

void replace(const pb::DecisionRequest& request, pb::Action* action) {
  std::vector<uint32_t> hand = hand_of(request);
  uint32_t cap = request.legal().replace().max_discard();
  auto* discard = action->mutable_replace();  // present even when empty: "keep the hand"
  for (size_t i = 1; i < hand.size() && static_cast<uint32_t>(discard->discard_size()) < cap;
       ++i) {
    if (hand[i] >= 5 && hand[i] <= 8) discard->add_discard(hand[i]);
  }
}

void duel(const pb::DecisionRequest& request, pb::Action* action) {
  std::vector<uint32_t> hand = hand_of(request);
  action->mutable_duel()->set_card(hand.size() > 2 ? hand.back() : hand.front());
}

void attack(const pb::DecisionRequest& request, pb::Action* action) {
  std::vector<uint32_t> hand = hand_of(request);
  uint32_t lowest = hand.front();
  long spares = std::count(hand.begin(), hand.end(), lowest) - 1;
  const pb::Attack* best = nullptr;
  std::tuple<int, int, int> best_score;
  for (const pb::Attack& option : request.legal().attack().attacks()) {
    long spends = std::count(option.cards().begin(), option.cards().end(), lowest);
    uint32_t top = *std::max_element(option.cards().begin(), option.cards().end());
    std::tuple<int, int, int> score{spends <= spares ? 1 : 0, option.cards_size(),
                                    -static_cast<int>(top)};
    if (best == nullptr || score > best_score) best = &option, best_score = score;
  }
  *action->mutable_attack() = *best;  // AttackOptions.attacks is never empty (P6)
}

void defend(const pb::DecisionRequest& request, pb::Action* action) {
  std::vector<uint32_t> pool = hand_of(request);
  pool.erase(pool.begin());  // never spend the lowest card
  auto* answers = action->mutable_defend();
  for (uint32_t card : request.view().current_attack()) {
    auto fitting = std::find_if(pool.begin(), pool.end(), [card](uint32_t v) { return v >= card; });
    if (fitting != pool.end()) {
      answers->add_answers()->set_defend_with(*fitting);
      pool.erase(fitting);
    } else {
      answers->add_answers()->set_sacrifice(true);
    }
  }
}

// TACOCAT_BOT_FAIL=attack (or replace, duel, defend) makes that kind of decision throw, to
// see the fallback below at work (tests/test_cpp_bot.py uses it).
const std::string kFailKind = env_or("TACOCAT_BOT_FAIL", "");
// The longest Action.fallback reason sent (the referee keeps 200 characters).
constexpr size_t kMaxFallbackChars = 200;

std::string kind_word(pb::DecisionKind kind) {
  switch (kind) {
    case pb::DECISION_KIND_REPLACE: return "replace";
    case pb::DECISION_KIND_DUEL: return "duel";
    case pb::DECISION_KIND_ATTACK: return "attack";
    case pb::DECISION_KIND_DEFEND: return "defend";
    default: return "";
  }
}

pb::Action think(const pb::DecisionRequest& request) {
  pb::Action action;
  action.set_game_id(request.game_id());
  action.set_request_id(request.request_id());  // uint64 end to end
  if (!kFailKind.empty() && kFailKind == kind_word(request.kind())) {
    throw std::runtime_error("TACOCAT_BOT_FAIL=" + kFailKind);
  }
  switch (request.kind()) {
    case pb::DECISION_KIND_REPLACE: replace(request, &action); break;
    case pb::DECISION_KIND_DUEL: duel(request, &action); break;
    case pb::DECISION_KIND_ATTACK: attack(request, &action); break;
    case pb::DECISION_KIND_DEFEND: defend(request, &action); break;
    default: std::cerr << "cpp bot: unknown decision kind " << request.kind() << std::endl;
  }
  return action;
}

// A legal answer that needs no thought, used if think() throws (a bug should not forfeit):
// keep the hand, duel the lowest card, the first legal attack, sacrifice everything. The
// Action says so in `fallback` (arena.proto), so the referee counts it as this bot's error.
pb::Action fallback(const pb::DecisionRequest& request, const std::string& why) {
  pb::Action action;
  action.set_game_id(request.game_id());
  action.set_request_id(request.request_id());
  switch (request.kind()) {
    case pb::DECISION_KIND_DUEL:
      action.mutable_duel()->set_card(request.legal().duel().values(0));
      break;
    case pb::DECISION_KIND_ATTACK:
      *action.mutable_attack() = request.legal().attack().attacks(0);
      break;
    case pb::DECISION_KIND_DEFEND:
      for (int i = 0; i < request.view().current_attack_size(); ++i) {
        action.mutable_defend()->add_answers()->set_sacrifice(true);
      }
      break;
    default: action.mutable_replace(); break;
  }
  std::istringstream words("think() threw " + why);
  std::string line, word;
  while (words >> word) line += (line.empty() ? "" : " ") + word;  // one line
  action.set_fallback(line.substr(0, kMaxFallbackChars));
  return action;
}

pb::Action decide(const pb::DecisionRequest& request) {
  try {
    return think(request);
  } catch (const std::exception& error) {
    std::cerr << "cpp bot: think() failed in " << request.game_id() << ": " << error.what()
              << std::endl;
    return fallback(request, error.what());
  }
}

// Every session's games (a bot that reconnects counts them all).
struct Tally {
  int win = 0, loss = 0, draw = 0;
};

// What one session did: the Welcome's id (empty: the referee never welcomed us) and, once a
// SessionEnd came, its reason.
struct Session {
  std::string address;
  std::string id;
  bool ended = false;
  pb::SessionEndReason reason = pb::SESSION_END_REASON_UNSPECIFIED;
};

// SESSION_END_REASON_SERVER_SHUTDOWN -> "server_shutdown", the Python SDK's word for it.
std::string reason_word(pb::SessionEndReason reason) {
  std::string word = pb::SessionEndReason_Name(reason);
  const std::string prefix = "SESSION_END_REASON_";
  if (word.rfind(prefix, 0) == 0) word = word.substr(prefix.size());
  std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) {
    return static_cast<char>(std::tolower(c));
  });
  return word;
}

// Handles one referee message; returns false once the session is over.
bool handle(const pb::RefereeMessage& message, std::vector<pb::Action>* answers, Tally* tally,
            Session* session) {
  switch (message.message_case()) {
    case pb::RefereeMessage::kWelcome:
      session->id = message.welcome().session_id();
      std::cerr << "cpp bot " << message.welcome().bot_name() << ": connected to "
                << session->address << ", session " << session->id << std::endl;
      return true;
    case pb::RefereeMessage::kGameStart:
      return true;
    case pb::RefereeMessage::kDecisionRequest:
      answers->push_back(decide(message.decision_request()));
      return true;
    case pb::RefereeMessage::kError: {
      const pb::Error& error = message.error();
      std::cerr << "cpp bot: referee error " << pb::ErrorCode_Name(error.code()) << " ("
                << pb::ErrorOutcome_Name(error.outcome()) << ") in game "
                << (error.game_id().empty() ? "-" : error.game_id()) << ": " << error.message()
                << std::endl;
      return true;
    }
    case pb::RefereeMessage::kGameEnd: {
      const pb::GameEnd& end = message.game_end();
      if (end.result() == pb::GAME_RESULT_WIN) ++tally->win;
      if (end.result() == pb::GAME_RESULT_LOSS) ++tally->loss;
      if (end.result() == pb::GAME_RESULT_DRAW) ++tally->draw;
      if (end.reason() != pb::END_REASON_GOAL && end.reason() != pb::END_REASON_ROUND_CAP) {
        std::cerr << "cpp bot: game " << end.game_id() << " ended by "
                  << pb::EndReason_Name(end.reason()) << ": " << end.detail() << std::endl;
      }
      return true;
    }
    case pb::RefereeMessage::kSessionEnd:
      session->ended = true;
      session->reason = message.session_end().reason();
      std::cerr << "cpp bot: session " << session->id << " ended: "
                << reason_word(session->reason) << " (" << message.session_end().message()
                << "); won " << tally->win << ", lost " << tally->loss << ", drew "
                << tally->draw << std::endl;
      return false;
    case pb::RefereeMessage::kBatch:
      for (const pb::RefereeMessage& item : message.batch().messages()) {
        if (!handle(item, answers, tally, session)) return false;
      }
      return true;
    default:
      return true;  // a newer referee's message: ignore what we do not know
  }
}

// Reconnecting: on for a TCP address (a `serve` arena: the bot outlives its restart), off for
// a unix: socket (a sandbox: the launcher that started the bot restarts it when it must);
// TACOCAT_BOT_RECONNECT (0/false/no, or anything else for on) decides first. Every bot that
// tacocat-arena starts (run, play, check, workers, hosted bots) gets TACOCAT_BOT_RECONNECT=0.
bool reconnects_by_default(const std::string& address) {
  const std::string setting = env_or("TACOCAT_BOT_RECONNECT", "");
  if (!setting.empty()) return setting != "0" && setting != "false" && setting != "no";
  return address.rfind("unix:", 0) != 0;
}

// How long the bot keeps trying after losing its session, and the waits between attempts:
// doubling from the first to the longest, each with up to 20% added at random, so that a
// whole class does not knock at the same instant (the Python SDK's RECONNECT_FOR_S, BACKOFF_S).
constexpr double kReconnectForS = 600.0;
constexpr double kFirstWaitS = 1.0;
constexpr double kLongestWaitS = 30.0;
// How long one connection attempt waits for a referee to listen before it gives up.
constexpr int kConnectTimeoutS = 30;

std::string status_name(grpc::StatusCode code) {
  static const char* kNames[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT",
                                 "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
                                 "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
                                 "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
                                 "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
                                 "UNAUTHENTICATED"};
  int index = static_cast<int>(code);
  return index >= 0 && index <= 16 ? kNames[index] : "UNKNOWN";
}

// One session, from Hello to the stream's close; the status says how the stream closed.
grpc::Status play_session(Session* session, const std::string& name, Tally* tally) {
  auto channel = grpc::CreateChannel(session->address, grpc::InsecureChannelCredentials());
  // Without a deadline a bot started with no referee would wait for ever, printing nothing.
  if (!channel->WaitForConnected(std::chrono::system_clock::now() +
                                 std::chrono::seconds(kConnectTimeoutS))) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        "no referee answered at " + session->address + " within " +
                            std::to_string(kConnectTimeoutS) + " s");
  }
  auto stub = pb::Arena::NewStub(channel);
  grpc::ClientContext context;
  context.set_wait_for_ready(true);
  std::unique_ptr<grpc::ClientReaderWriter<pb::BotMessage, pb::RefereeMessage>> stream(
      stub->Play(&context));

  pb::BotMessage hello;
  hello.mutable_hello()->set_protocol_version(1);
  hello.mutable_hello()->set_bot_name(name);
  hello.mutable_hello()->set_token(env_or("TACOCAT_ARENA_TOKEN", ""));
  hello.mutable_hello()->set_client_info("tacocat cpp example bot (grpc++ " +
                                         grpc::Version() + ")");
  hello.mutable_hello()->set_accept_batches(true);
  stream->Write(hello);

  pb::RefereeMessage message;
  bool open = true;
  while (open && stream->Read(&message)) {
    std::vector<pb::Action> answers;
    open = handle(message, &answers, tally, session);
    pb::BotMessage reply;
    if (answers.size() == 1) {
      *reply.mutable_action() = answers.front();
    } else if (answers.size() > 1) {
      for (const pb::Action& answer : answers) *reply.mutable_actions()->add_actions() = answer;
    }
    if (!answers.empty() && !stream->Write(reply)) break;  // the stream is closing
  }
  stream->WritesDone();
  return stream->Finish();
}

}  // namespace

int main() {
  const std::string address = env_or("TACOCAT_ARENA_ADDRESS", "127.0.0.1:50051");
  const std::string name = env_or("TACOCAT_ARENA_BOT", "cpp");
  const bool reconnect = reconnects_by_default(address);
  std::mt19937 jitter(std::random_device{}());
  Tally tally;
  bool had_session = false;  // a Welcome came, in this session or an earlier one
  auto lost_at = std::chrono::steady_clock::now();
  int attempt = 0;
  while (true) {
    Session session;
    session.address = address;
    grpc::Status status = play_session(&session, name, &tally);
    if (!session.id.empty()) had_session = true;
    std::string why;
    if (status.ok()) {
      if (!session.ended) std::cerr << "cpp bot: the stream ended without a SessionEnd\n";
      if (!(reconnect && session.reason == pb::SESSION_END_REASON_SERVER_SHUTDOWN)) return 0;
      why = "the server is shutting down";
    } else {
      const std::string line = status_name(status.error_code()) + ": " + status.error_message();
      if (!session.id.empty()) {
        std::cerr << "cpp bot " << name << ": lost the connection to " << address
                  << ", session " << session.id << " (" << line << ")" << std::endl;
      }
      // A refusal (a wrong token, a revoked player) is never retried, nor is a first
      // connection that found no referee: that is a mistake to show, not to wait out.
      bool lost = had_session && status.error_code() == grpc::StatusCode::UNAVAILABLE;
      if (!(reconnect && lost)) {
        std::cerr << line << std::endl;
        return 1;
      }
      why = "lost the connection to " + address;
    }
    if (!session.id.empty()) {  // a new session resets the backoff and the give-up clock
      attempt = 0;
      lost_at = std::chrono::steady_clock::now();
    } else {
      ++attempt;
      std::chrono::duration<double> gone = std::chrono::steady_clock::now() - lost_at;
      if (gone.count() > kReconnectForS) {
        std::cerr << "cpp bot " << name << ": gave up reconnecting to " << address << " after "
                  << kReconnectForS << " s: " << why << std::endl;
        return 1;
      }
    }
    double wait = std::min(kFirstWaitS * (1 << std::min(attempt, 10)), kLongestWaitS) *
                  (1.0 + std::uniform_real_distribution<double>(0.0, 0.2)(jitter));
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f", wait);
    std::cerr << "cpp bot " << name << ": " << why << "; reconnecting in " << seconds
              << " s (set TACOCAT_BOT_RECONNECT=0 to stop instead)" << std::endl;
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }
}
