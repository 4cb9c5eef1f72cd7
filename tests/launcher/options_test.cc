// rccrun's parsing of options, host lists and hostfiles, and rank placement.
#include <gtest/gtest.h>

#include "options.h"

namespace rccrun {
namespace {

bool parse(std::vector<const char*> args, Options* options, std::string* error) {
  args.insert(args.begin(), "rccrun");
  return parse_command_line(static_cast<int>(args.size()), args.data(), options, error);
}

TEST(OptionsTest, CommandLine) {
  Options o;
  std::string error;
  ASSERT_TRUE(parse({"-np", "4", "-x", "A,B", "-x", "C=3", "--env", "D=x=y", "--tag-output", "--bind-to=core",
                     "--timeout", "2.5", "-H", "h1:2,h2", "prog", "-n", "5"},
                    &o, &error))
      << error;
  EXPECT_EQ(o.ranks, 4);
  EXPECT_EQ(o.forwarded, (std::vector<std::string>{"A", "B"}));
  ASSERT_EQ(o.settings.size(), 2u);
  EXPECT_EQ(o.settings[0], (std::pair<std::string, std::string>{"C", "3"}));
  EXPECT_EQ(o.settings[1], (std::pair<std::string, std::string>{"D", "x=y"}));
  EXPECT_TRUE(o.tag_output);
  EXPECT_EQ(o.binding, Binding::kCore);
  EXPECT_DOUBLE_EQ(o.timeout_s, 2.5);
  ASSERT_EQ(o.hosts.size(), 2u);
  EXPECT_EQ(o.hosts[0].slots, 2);
  EXPECT_EQ(o.hosts[1].slots, 1);
  EXPECT_EQ(o.command, (std::vector<std::string>{"prog", "-n", "5"}));  // the program's own options stay its own
}

TEST(OptionsTest, BadUsageNamesTheProblem) {
  Options o;
  std::string error;
  EXPECT_FALSE(parse({"-n", "0", "prog"}, &o, &error));
  EXPECT_NE(error.find("-n"), std::string::npos) << error;
  EXPECT_FALSE(parse({"-n", "x", "prog"}, &o, &error));
  EXPECT_FALSE(parse({"-n"}, &o, &error));
  EXPECT_NE(error.find("needs a value"), std::string::npos) << error;
  EXPECT_FALSE(parse({"-n", "2"}, &o, &error));
  EXPECT_NE(error.find("no program"), std::string::npos) << error;
  EXPECT_FALSE(parse({"--bogus", "prog"}, &o, &error));
  EXPECT_NE(error.find("--bogus"), std::string::npos) << error;
  EXPECT_FALSE(parse({"--bind-to", "socket", "prog"}, &o, &error));
  EXPECT_FALSE(parse({"--env", "NOEQUALS", "prog"}, &o, &error));
  EXPECT_FALSE(parse({"-x", "1BAD", "prog"}, &o, &error));
  EXPECT_FALSE(parse({"--timeout", "-1", "prog"}, &o, &error));
  EXPECT_FALSE(parse({"-H", "h:0", "prog"}, &o, &error));
  EXPECT_FALSE(parse({"--hostfile", "/nonexistent/hostfile", "prog"}, &o, &error));
  EXPECT_NE(error.find("/nonexistent/hostfile"), std::string::npos) << error;
}

TEST(OptionsTest, Hostfile) {
  std::vector<HostSlots> hosts;
  std::string error;
  ASSERT_TRUE(parse_hostfile("# cluster\nnode1 slots=4\n\n  node2:2   # two\nnode3\nnode1 slots=1 max_slots=8\n",
                             &hosts, &error))
      << error;
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[0].host, "node1");
  EXPECT_EQ(hosts[0].slots, 5);  // named twice: merged
  EXPECT_EQ(hosts[1].host, "node2");
  EXPECT_EQ(hosts[1].slots, 2);
  EXPECT_EQ(hosts[2].slots, 1);
  hosts.clear();
  EXPECT_FALSE(parse_hostfile("node1 slots=4\nnode2 cpus=3\n", &hosts, &error));
  EXPECT_NE(error.find("line 2"), std::string::npos) << error;
  EXPECT_FALSE(parse_hostfile("node1 slots=0\n", &hosts, &error));
  EXPECT_FALSE(parse_hostfile("# nothing\n\n", &hosts, &error));
  EXPECT_TRUE(hosts.empty());
  ASSERT_TRUE(parse_host_list("[fe80::1]:2,10.0.0.1:3", &hosts, &error)) << error;
  EXPECT_EQ(hosts[0].host, "fe80::1");
  EXPECT_EQ(hosts[0].slots, 2);
}

TEST(OptionsTest, Placement) {
  std::vector<Placement> p;
  std::string error;
  ASSERT_TRUE(place_ranks(5, {{"a", 2}, {"b", 4}}, &p, &error));
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[1].host, "a");
  EXPECT_EQ(p[1].local_rank, 1);
  EXPECT_EQ(p[1].local_size, 2);
  EXPECT_EQ(p[4].host, "b");
  EXPECT_EQ(p[4].local_rank, 2);
  EXPECT_EQ(p[4].local_size, 3);
  ASSERT_TRUE(place_ranks(0, {{"a", 2}, {"b", 1}}, &p, &error));
  EXPECT_EQ(p.size(), 3u);
  EXPECT_FALSE(place_ranks(7, {{"a", 2}, {"b", 4}}, &p, &error));
  EXPECT_NE(error.find("only 6 slots"), std::string::npos) << error;
  EXPECT_FALSE(place_ranks(0, {}, &p, &error));
  ASSERT_TRUE(place_ranks(3, {}, &p, &error));
  EXPECT_EQ(p[2].host, "localhost");
}

TEST(OptionsTest, ShellQuote) {
  EXPECT_EQ(shell_quote("plain"), "'plain'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
}

}  // namespace
}  // namespace rccrun
