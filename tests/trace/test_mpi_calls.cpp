// The MPI call table: every format's spelling of a call finds its row, case-insensitively and with
// or without the P prefix; waits, blocking receives, barriers and collectives are idle, sends and
// non-blocking posts communicating; the classifier falls back to the table after its lists.
#include <gtest/gtest.h>

#include <string>

#include "src/trace/mpi_calls.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

TEST(MpiCalls, EveryFormatsSpellingFindsTheSameRow) {
  for (const char* name : {"PMPI_Waitall", "MPI_Waitall", "mpi_waitall", "MPI_WAITALL", "waitall", "pmpi_WaitAll"}) {
    const MpiCall* c = find_mpi_call(name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_EQ(c->name, "waitall") << name;
  }
  EXPECT_EQ(find_mpi_call("PMPI_"), nullptr);
  EXPECT_EQ(find_mpi_call(""), nullptr);
  EXPECT_EQ(find_mpi_call("MPI_Waitalls"), nullptr);
  EXPECT_EQ(find_mpi_call(std::string(200, 'w')), nullptr);
}

TEST(MpiCalls, WaitingIsIdleAndTheCostOfCommunicatingIsCommunicating) {
  // SMPI (Pajé), Score-P (OTF2), SimGrid TI actions, Extrae (Paraver) state names.
  for (const char* name : {"PMPI_Recv", "PMPI_Wait", "PMPI_Waitall", "PMPI_Waitany", "PMPI_Barrier", "PMPI_Allreduce",
                           "PMPI_Bcast", "PMPI_Alltoall", "PMPI_Reduce", "PMPI_Gather", "MPI_Sendrecv", "recv", "wait",
                           "bcast", "allreduce", "reducescatter", "Waiting a message", "Wait/WaitAll",
                           "Group Communication", "Synchronization", "idle"}) {
    EXPECT_EQ(mpi_call_category(name), StateCategory::Idle) << name;
  }
  for (const char* name : {"PMPI_Send", "PMPI_Isend", "PMPI_Irecv", "MPI_Test", "MPI_Iprobe", "MPI_Pack", "send", "isend",
                           "irecv", "test", "Blocking Send", "Immediate Send", "Immediate Receive", "Test/Probe",
                           "MPI_Ibarrier"}) {
    EXPECT_EQ(mpi_call_category(name), StateCategory::Communicating) << name;
  }
  for (const char* name : {"computing", "compute", "Running"}) {
    EXPECT_EQ(mpi_call_category(name), StateCategory::Computing) << name;
  }
  // An MPI call the table does not list is the cost of using MPI; any other name is not its say.
  EXPECT_EQ(mpi_call_category("PMPI_Comm_rank"), StateCategory::Communicating);
  EXPECT_EQ(mpi_call_category("MPI_Type_commit"), StateCategory::Communicating);
  EXPECT_EQ(mpi_call_category("main"), StateCategory::None);
  EXPECT_EQ(mpi_call_category("do_work"), StateCategory::None);
}

TEST(MpiCalls, CollectivesSayHowTheirDataMoves) {
  EXPECT_EQ(find_mpi_call("PMPI_Bcast")->collective, CollectiveKind::FromRoot);
  EXPECT_EQ(find_mpi_call("MPI_Scatterv")->collective, CollectiveKind::FromRoot);
  EXPECT_EQ(find_mpi_call("MPI_Reduce")->collective, CollectiveKind::ToRoot);
  EXPECT_EQ(find_mpi_call("gather")->collective, CollectiveKind::ToRoot);
  EXPECT_EQ(find_mpi_call("PMPI_Allreduce")->collective, CollectiveKind::AllToAll);
  EXPECT_EQ(find_mpi_call("PMPI_Barrier")->collective, CollectiveKind::AllToAll);
  EXPECT_EQ(find_mpi_call("PMPI_Send")->collective, CollectiveKind::None);
  // Every collective row is waiting: it ends when the last participant has arrived.
  for (const MpiCall& c : mpi_calls()) {
    if (c.collective != CollectiveKind::None) {
      EXPECT_EQ(c.category, StateCategory::Idle) << c.name;
    }
  }
}

TEST(MpiCalls, RowsAreCanonical) {
  // Lower case, no prefix, each found by its own name (which needs the order the lookup assumes).
  for (const MpiCall& c : mpi_calls()) {
    EXPECT_FALSE(has_mpi_prefix(c.name)) << c.name;
    for (const char ch : c.name) EXPECT_FALSE(ch >= 'A' && ch <= 'Z') << c.name;
    EXPECT_EQ(find_mpi_call(c.name), &c) << c.name;
  }
}

TEST(MpiCalls, TheClassifierUsesTheTableAfterItsLists) {
  StateClassifier c({"computing"}, {}, {"PMPI_Send"});
  // The table's computing rows are the lists' say: "compute" is not computing here.
  EXPECT_EQ(c.classify("compute"), StateCategory::None);
  EXPECT_EQ(c.classify("PMPI_Send"), StateCategory::Idle);  // the list wins
  EXPECT_EQ(c.classify("PMPI_Recv"), StateCategory::Idle);
  EXPECT_EQ(c.classify("PMPI_Isend"), StateCategory::Communicating);
  EXPECT_EQ(c.classify("computing"), StateCategory::Computing);
  EXPECT_EQ(c.classify("user_function"), StateCategory::None);
  StateClassifier without({"computing"}, {}, {}, false);
  EXPECT_EQ(without.classify("PMPI_Recv"), StateCategory::None);
}

}  // namespace
}  // namespace kanoko::trace
