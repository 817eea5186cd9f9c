"""Client kind `filebeat`: `engine.FILEBEAT_ENGINE` runs a profile on real Filebeat (`real`, one
Filebeat per pod with its `yml`; `builds` finds the installed versions, `testconfig` runs
`filebeat test config`) or on the Sarama emulation (`sarama`, its process `plan`)."""
