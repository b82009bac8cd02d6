"""Agreement minimal pairs: which verb agrees with which subject, and the rules that keep its twin ungrammatical."""
